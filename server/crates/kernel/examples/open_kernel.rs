//! Times `kernel::load::open` on a folder (development aid).
fn main() {
    let path = std::env::args().nth(1).expect("path");
    let t = std::time::Instant::now();
    let k = fevlint_kernel::load::open(std::path::Path::new(&path)).expect("open");
    let t1 = t.elapsed();
    let btf = fevlint_kernel::btf::Btf::parse("btf", k.btf.as_ref().expect("btf").value.clone()).expect("parse");
    let t2 = t.elapsed();
    println!("open {t1:?} btf {t2:?} {}", k.name);
    drop(btf);
}
