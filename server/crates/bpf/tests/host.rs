//! Whether a tool binary attaches its programs by section name
//! ([`fevlint_bpf::host::calls_skeleton_attach`]), judged by the tools' own sources: every
//! binary of Debian's libbpf-tools 0.26 (libbpf linked statically, stripped) against
//! bcc v0.26.0's `libbpf-tools/*.c`, where exactly the tools below never call their
//! skeleton's `NAME_bpf__attach()` (`git grep -L "_bpf__attach(" v0.26.0 --
//! 'libbpf-tools/*.c'`, helpers left out). The package's 61 paths are 52 binaries and 9
//! links (`ext4dist` -> `fsdist`). Cost: reading them (about 1 MB each), under 2 seconds.

/// The libbpf-tools whose source never calls the skeleton's attach.
const HAND_ATTACHED: &[&str] = &[
    "bashreadline",
    "biosnoop",
    "biostacks",
    "funclatency",
    "gethostlatency",
    "javagc",
    "ksnoop",
    "llcstat",
    "runqlen",
    "syscount",
];

#[test]
fn debian_libbpf_tools_attach_by_section_exactly_where_their_sources_say() {
    if !fevlint_testkit::real_tools("Debian's libbpf-tools") {
        return;
    }
    let list = std::process::Command::new("dpkg").args(["-L", "libbpf-tools"]).output().expect("dpkg");
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    let tools: Vec<&str> = list.lines().filter(|l| l.starts_with("/usr/sbin/")).collect();
    assert!(tools.len() >= 60, "libbpf-tools installed? {tools:?}");
    let mut wrong = Vec::new();
    for path in &tools {
        let name = path.rsplit('/').next().expect("name");
        let bytes = std::fs::read(path).expect("read");
        let said = fevlint_bpf::host::calls_skeleton_attach(&bytes);
        let truth = !HAND_ATTACHED.contains(&name);
        if said != Some(truth) {
            wrong.push(format!("{name}: said {said:?}, the source says {truth}"));
        }
        let objects = fevlint_bpf::host::embedded_objects(path, &bytes).expect("objects");
        assert!(!objects.is_empty() && objects.iter().all(|o| o.host_attaches_by_section == said), "{name}");
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
