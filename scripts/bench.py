#!/usr/bin/env python3
"""Whole-process benchmarks behind every performance figure in the README.

Run through scripts/bench.sh (which builds the binary and writes the scripts first, and
passes FEVLINT_BENCH_BIN and FEVLINT_BENCH_OUT). Each fevlint command runs interleaved
with its anchor (pahole, pfunct) in the same loop, one process per run, on the same
inputs, with a private FEVLINT_CACHE_DIR (warmed by one uncounted run; `cold` rows clear
it before every run). Prints a Markdown report with the machine, the load average before
and after, and the commit; also writes it to $FEVLINT_BENCH_OUT/REPORT.md.
FEVLINT_BENCH_QUICK=1 (scripts/bench.sh --quick): one run of the cold, lock and large rows,
the 1,000-line script for the 100,000-line row, on the debug build: it checks that every
row runs, not how fast.
"""
import json, os, platform, re, resource, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FEV = Path(os.environ.get("FEVLINT_BENCH_BIN", ROOT / "target/release/fevlint"))
OUT = Path(os.environ.get("FEVLINT_BENCH_OUT", ROOT / "target/bench"))
QUICK = os.environ.get("FEVLINT_BENCH_QUICK") == "1"
K = ROOT / "fixtures/kernels"
K612 = K / "6.12.117+deb12-amd64"
FOUR = ["6.1.0-47-amd64", "6.1.0-56-amd64", "6.12.117+deb12-amd64", "6.18.44-fc-v769"]
RUNS = int(os.environ.get("FEVLINT_BENCH_RUNS", "21"))
CACHE = Path(tempfile.mkdtemp(prefix="fevlint-bench-cache-"))
ENV = dict(os.environ, FEVLINT_CACHE_DIR=str(CACHE))
ONE_CORE = ["taskset", "-c", "1"] if shutil.which("taskset") and os.cpu_count() > 1 and not QUICK else []


def once(argv, stdin=None):
    """Wall seconds, CPU seconds and peak RSS (MB) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=stdin)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.exit(f"bench: {argv} failed ({p.returncode}): {p.stderr.decode(errors='replace')[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def rss(argv):
    """"peak RSS N MB" of one run, from /usr/bin/time (ru_maxrss of children is a running
    max); not measured in the quick mode."""
    if QUICK:
        return "peak RSS not measured (--quick)"
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, env=ENV, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    return f"peak RSS {int(out.stderr.strip().splitlines()[-1]) / 1024:.0f} MB"


def interleaved(commands, runs=RUNS, cold=False, prepare=None):
    """Runs the commands alternately; per command the median and p90 wall ms. `cold`: the
    cache emptied before each run; `prepare`: called before each run."""
    for argv in commands.values():
        if not QUICK:
            once(argv)  # warm the page cache and the private fevlint cache
    times = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            if cold:
                shutil.rmtree(CACHE, ignore_errors=True)
            if prepare:
                prepare()
            times[name].append(once(argv)[0] * 1e3)
    return {name: (statistics.median(t), sorted(t)[int(0.9 * (len(t) - 1))]) for name, t in times.items()}


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((int(l.split()[1]) // 1024 // 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
    commit = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip()
    return f"{cpu}, {os.cpu_count()} cores, {mem} GiB, Linux {platform.release()}", commit


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def bpf_rows(scratch, kernels4, row):
    """Compiled BPF objects (the tests' sources, built by clang against 6.1's vmlinux.h)
    against four kernels, beside one `bpftool gen min_core_btf` run (one object, one
    kernel: libbpf's own relocation of it)."""
    btf61 = scratch / "6.1.btf"
    btf61.write_bytes(subprocess.run(["zstd", "-dc", str(K / "6.1.0-56-amd64/vmlinux.btf.zst")], capture_output=True,
                                     check=True).stdout)
    h = subprocess.run(["bpftool", "btf", "dump", "file", str(btf61), "format", "c"], capture_output=True, check=True)
    (scratch / "vmlinux.h").write_bytes(h.stdout)
    sources = sorted((ROOT / "server/tests/bpf").glob("*.bpf.c")) + [ROOT / "server/crates/bpf/tests/judge/programs/moved.bpf.c"]
    objs = []
    for src in sources:
        obj = scratch / src.name.replace(".c", ".o")
        objs.append(str(obj))
        subprocess.run(["clang", "-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86", f"-I{scratch}", "-c", str(src),
                        "-o", str(obj)], check=True)
    drift = scratch / "drift.bpf.o"
    # A real tool collection: Debian's libbpf-tools (bcc's, built by Debian), each tool a
    # binary embedding its skeleton's BPF object(s) (scripts/install-test-deps.sh), with
    # the test objects compiled above.
    listed = subprocess.run(["dpkg", "-L", "libbpf-tools"], capture_output=True, text=True, check=True).stdout.split()
    tools = sorted({str(Path(p).resolve()) for p in listed if p.startswith("/usr/sbin/") and Path(p).is_file()})
    embedded = sum(Path(t).read_bytes().count(b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x01\x00\xf7\x00") for t in tools)
    r = interleaved({
        "one": [str(FEV), "check", "--format", "json"] + kernels4 + [str(drift)],
        "tools": [str(FEV), "check", "--format", "json"] + kernels4 + tools + objs,
        "bpftool": ["bpftool", "gen", "min_core_btf", str(scratch / "6.12.btf"), str(scratch / "min.btf"), str(drift)],
    })
    row("check one BPF object (drift.bpf.o) x 4 kernels", r["one"],
        ("`bpftool gen min_core_btf` (1 object, 1 kernel)", r["bpftool"]), "target: well under one bpftool run")
    row(f"check {embedded + len(objs)} BPF objects (Debian's libbpf-tools: {len(tools)} binaries embedding {embedded}; "
        f"the {len(objs)} test objects) x 4 kernels",
        r["tools"], ("`bpftool gen min_core_btf` (1 object, 1 kernel)", r["bpftool"]), "target < 1 s")


def main():
    scripts = OUT / "scripts"
    scratch = Path(tempfile.mkdtemp(prefix="fevlint-bench-"))
    raw_btf = scratch / "6.12.btf"
    raw_btf.write_bytes(subprocess.run(["zstd", "-dc", str(K612 / "vmlinux.btf.zst")], capture_output=True,
                                       check=True).stdout)
    one_field = scripts / "one-field-1000.fev"
    repeated = scripts / "repeated-1000.fev"
    copies = 1 if QUICK else 100
    big = scratch / f"one-field-{copies}k.fev"
    big.write_text(one_field.read_text() * copies)
    kernels4 = [a for k in FOUR for a in ("--kernel", str(K / k))]
    cpu, commit = machine()
    load_before = load()
    rows = []

    def row(what, ours, anchor=None, note=""):
        text = f"| {what} | **{ours[0]:.1f} ms** (p90 {ours[1]:.1f})"
        if anchor:
            name, theirs = anchor
            text += f" | {name}: {theirs[0]:.1f} ms | {ours[0] / theirs[0]:.2f}"
        else:
            text += " | | "
        rows.append(text + f" | {note} |")
        print(rows[-1], flush=True)

    print(f"# fevlint benchmarks\n\n{cpu}; commit {commit}; load before {load_before}\n", flush=True)
    print("| what (whole process) | fevlint, median | anchor, median | ratio | notes |\n|---|---|---|---|---|")
    r = interleaved({
        "folder": [str(FEV), "kernel", "type", str(K612), "struct file"],
        "raw": [str(FEV), "kernel", "type", str(raw_btf), "struct file"],
        "pahole": ["pahole", "-C", "file", str(raw_btf)],
    })
    row("`kernel type <6.12 folder> 'struct file'`", r["folder"], ("`pahole -C file` (raw BTF)", r["pahole"]))
    row("`kernel type <raw 6.12 BTF> 'struct file'`", r["raw"], ("`pahole -C file`", r["pahole"]))
    r = interleaved({
        "folder": [str(FEV), "kernel", "fn", str(K612), "vfs_read"],
        "pfunct": ["pfunct", "-F", "btf", "-f", "vfs_read", str(raw_btf)],
    })
    row("`kernel fn <6.12 folder> vfs_read`", r["folder"], ("`pfunct -f vfs_read` (raw BTF)", r["pfunct"]),
        "fevlint also reads the ftrace list, blacklist and symbols")
    r = interleaved({"main": [str(FEV), "check", "--kernel", str(K612), str(ROOT / "examples")]})
    row("README's main job: `check --kernel <6.12 folder> examples/`", r["main"])
    r = interleaved({"one": ONE_CORE + [str(FEV), "check", "--format", "json", "--kernel", str(K612), str(one_field)]})
    row("check 1,000 definitions, 6.12, one core", r["one"])
    r = interleaved({"four": ONE_CORE + [str(FEV), "check", "--format", "json"] + kernels4 + [str(one_field)],
                     "rep": ONE_CORE + [str(FEV), "check", "--format", "json"] + kernels4 + [str(repeated)],
                     "pahole": ONE_CORE + ["pahole", "-C", "file", str(raw_btf)]})
    row("check 1,000 definitions x 4 kernels with drift, one core", r["four"],
        ("`pahole -C file` (raw BTF), one core", r["pahole"]), "target <= 1.0x the pahole lookup")
    row("check 143 field-heavy definitions repeated to 1,000 x 4 kernels, one core", r["rep"],
        ("`pahole -C file`, one core", r["pahole"]))
    # K201 remembers the similar names it found (`*.similar1`): a script's first run searches.
    def forget_similar():
        for f in CACHE.glob("*.similar1"):
            f.unlink()
    r = interleaved({"first": ONE_CORE + [str(FEV), "check", "--format", "json"] + kernels4 + [str(one_field)],
                     "pahole": ONE_CORE + ["pahole", "-C", "file", str(raw_btf)]}, prepare=forget_similar)
    row("check 1,000 definitions x 4 kernels, the script's first run (K201's remembered similar names removed, the rest of the cache warm), one core", r["first"],
        ("`pahole -C file`, one core", r["pahole"]))
    r = interleaved({"cold": ONE_CORE + [str(FEV), "check", "--format", "json"] + kernels4 + [str(one_field)]},
                    runs=1 if QUICK else 5, cold=True)
    row("check 1,000 definitions x 4 kernels, cold cache (4 kernels decompressed and indexed), one core", r["cold"])
    argv = ONE_CORE + [str(FEV), "check", "--format", "json"] + kernels4 + [str(big)]
    r = interleaved({"big": argv}, runs=1 if QUICK else 5)
    row(f"check {copies},000 definitions x 4 kernels, one core", r["big"],
        note=f"{rss(argv)}; targets (100,000) <= 2 s, <= 300 MB")
    # Pathological single lines (issue 21): 40,000 `|`; 20,000 `#fevlint:ignore[` without
    # `]` (the directive search was quadratic); 20,000 codes in one suppression (a finding
    # each, quoting the line). Every one is past the kernel's 4,094-byte line: S004 only.
    lines = scratch / "lines"
    lines.mkdir()
    (lines / "pipes.fev").write_text("|" * 40000 + "\n")
    (lines / "ignores.fev").write_text("#fevlint:ignore[" * 20000 + "\n")
    (lines / "codes.fev").write_text("# fevlint: ignore[" + "S001," * 20000 + "]\nvfs_read(x64 file)\n")
    argv = [str(FEV), "check", str(lines)]
    r = interleaved({"lines": argv})
    row("check three pathological one-line scripts (40,000 pipes; 20,000 `#fevlint:ignore[`; "
        "20,000 codes in a suppression)", r["lines"], note=rss(argv))
    # The lock: 40,000 definitions (a function each from the 6.12 ftrace list) locked on
    # 6.12, the lock's TOML written one definition at a time.
    names = sorted({l.split()[0] for l in subprocess.run(
        ["zstd", "-dc", str(K612 / "available_filter_functions.zst")], capture_output=True, check=True,
        text=True).stdout.splitlines() if l and "." not in l.split()[0]})[:4000 if QUICK else 40000]
    many = scratch / "lock-40k.fev"
    many.write_text("".join(f"{n}(x64 a0, u32 a1)\n" for n in names))
    out = scratch / "fevlint.lock"
    argv = [str(FEV), "lock", "--kernel", str(K612), "--output", str(out), str(many)]
    r = interleaved({"lock": argv}, runs=1 if QUICK else 5)
    row(f"`lock` {len(names):,} definitions on 6.12", r["lock"],
        note=f"writes {out.stat().st_size / 1e6:.1f} MB; {rss(argv)}")
    # bpftrace: Debian's tools repeated to 100,000 lines (10,000 quick), on the two Debian
    # kernels with drift; the 24 tools without `#include`/`#define` or type definitions
    # (bpftrace takes those only before the first probe), shebangs dropped.
    tools = sorted((ROOT / "fixtures/bpftrace/debian-0.17-tools").glob("*.bt"))
    plain = [t.read_text() for t in tools]
    plain = [t for t in plain if not re.search(r"^(#include|#define|struct |union |enum )", t, re.M)]
    text = "".join("".join(l for l in t.splitlines(True) if not l.startswith("#!")) + "\n" for t in plain)
    want = 10_000 if QUICK else 100_000
    big_bt = scratch / "tools-100k.bt"
    big_bt.write_text(text * (want // text.count("\n") + 1))
    bt_lines = big_bt.read_text().count("\n")
    argv = ONE_CORE + [str(FEV), "check", "--format", "json", "--kernel", str(K / "6.1.0-56-amd64"),
                       "--kernel", str(K612), str(big_bt)]
    r = interleaved({"bt": argv}, runs=1 if QUICK else 5)
    row(f"check a {bt_lines:,}-line bpftrace script (Debian's tools repeated) x 2 kernels with drift, one core",
        r["bt"], note=f"{rss(argv)}; target (100,000 lines) well under 1 s per kernel")
    bpf_rows(scratch, kernels4, row)
    load_after = load()
    print(f"\nload after {load_after}")
    report = OUT / "REPORT.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(
        f"# fevlint benchmarks\n\n{cpu}; commit {commit}; load {load_before} before, {load_after} after; "
        f"{RUNS} interleaved runs per row unless noted (cold, 100k and lock: 5; --quick: one)\n\n"
        "| what (whole process) | fevlint, median | anchor, median | ratio | notes |\n|---|---|---|---|---|\n"
        + "\n".join(rows) + "\n")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(CACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
