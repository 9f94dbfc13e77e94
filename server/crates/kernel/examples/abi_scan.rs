//! Lists traceable functions whose parameter k is not in slot register k (development aid).
use fevlint_kernel::{Kernel, Trace};
use fevlint_types::abi;
fn main() {
    let path = std::env::args().nth(1).expect("kernel path");
    let k = Kernel::open(std::path::Path::new(&path)).expect("open");
    let src = k.types().expect("types");
    let regs = abi::arg_registers(k.arch);
    let mut shown = 0;
    for name in k.function_names().iter() {
        let Ok(f) = k.function(name) else { continue };
        if !matches!(f.trace, Trace::Traceable { count: 1 }) || f.prototypes.len() != 1 {
            continue;
        }
        let Ok(locs) = abi::locate(k.arch, src, &f.prototypes[0].proto) else { continue };
        for p in &locs {
            if let Some(r) = regs.get(p.index) {
                if p.loc != abi::Loc::Reg(r) {
                    println!("{name} param {} {:?} at {} ({:?})", p.index, p.name, p.loc.describe(), p.why);
                    shown += 1;
                    break;
                }
            }
        }
        if shown > 40 {
            break;
        }
    }
}
