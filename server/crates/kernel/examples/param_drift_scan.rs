//! Lists traceable functions whose first parameters changed between two kernels (development aid).
use fevlint_kernel::{Kernel, Trace};
use fevlint_types::layout;
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let ka = Kernel::open(std::path::Path::new(&a[0])).expect("open a");
    let kb = Kernel::open(std::path::Path::new(&a[1])).expect("open b");
    let (sa, sb) = (ka.types().expect("types"), kb.types().expect("types"));
    let mut n = 0;
    for name in ka.function_names().iter() {
        let (Ok(fa), Ok(fb)) = (ka.function(name), kb.function(name)) else { continue };
        if !matches!(fa.trace, Trace::Traceable { count: 1 }) || !matches!(fb.trace, Trace::Traceable { count: 1 }) {
            continue;
        }
        let (Some(pa), Some(pb)) = (fa.prototypes.first(), fb.prototypes.first()) else { continue };
        let show = |s: &dyn fevlint_types::model::TypeSource, p: &fevlint_types::model::FunctionInfo| {
            p.proto
                .params
                .iter()
                .take(2)
                .map(|x| {
                    format!("{} {}", layout::type_name(s, x.ty).unwrap_or_default(), x.name.clone().unwrap_or_default())
                })
                .collect::<Vec<_>>()
        };
        let (xa, xb) = (show(sa, pa), show(sb, pb));
        if xa.len() == 2 && xb.len() == 2 && xa != xb {
            println!("{name}: {xa:?} -> {xb:?}");
            n += 1;
            if n > 25 {
                break;
            }
        }
    }
}
