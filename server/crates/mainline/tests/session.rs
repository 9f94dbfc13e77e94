//! Writes that build on one another, with the fixture 6.12.117 kernel behind the parser.

mod common;

use fevlint_mainline::{Dialect, Errno, Line, Rejection, Session};

#[test]
fn one_tprobe_per_tracepoint_but_stubs_take_no_slot() {
    let d = Dialect::debian_6_12_117();
    let env = common::FixtureKernel::load("6.12.117+deb12-amd64");
    let mut s = Session::new(&d, &env);
    assert!(matches!(s.write("t:a kfree ptr"), Ok(Line::Probe(_))));
    // tracepoint_probe_register(kfree, __probestub_kfree, NULL) again: -EEXIST, no log.
    assert!(matches!(s.write("t:b kfree ptr"), Err(Rejection::Silent { errno: Errno::Eexist, .. })));
    // A tracepoint vmlinux lacks is kept as a stub (CONFIG_MODULES): any number of them.
    for l in ["t:c no_such_tracepoint_xyz", "t:d no_such_tracepoint_xyz"] {
        match s.write(l) {
            Ok(Line::Probe(p)) => assert!(p.tracepoint_stub, "{l}"),
            other => panic!("{l}: {other:?}"),
        }
    }
    // Removing the first kfree tprobe frees the tracepoint.
    assert!(s.write("-:tracepoints/a").is_ok());
    assert!(matches!(s.write("t:b kfree ptr"), Ok(Line::Probe(_))));
}
