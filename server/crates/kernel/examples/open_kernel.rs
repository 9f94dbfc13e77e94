//! Times `fevlint_kernel::open::open` on a folder (development aid).
fn main() {
    let path = std::env::args().nth(1).expect("path");
    let t = std::time::Instant::now();
    let k = fevlint_kernel::open::open(std::path::Path::new(&path)).expect("open");
    let t1 = t.elapsed();
    let btf = fevlint_btf::Btf::parse("btf", k.btf.as_ref().expect("btf").value.clone()).expect("parse");
    let t2 = t.elapsed();
    println!("open {t1:?} btf {t2:?} {}", k.name);
    drop(btf);
}
