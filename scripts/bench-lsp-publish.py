#!/usr/bin/env python3
"""Edit -> complete diagnostics, measured by a client outside the server's code (issue 26).

  scripts/bench-lsp-publish.py [BINARY] [push|pull|blocks|workspace|all] [LINES ...]
  FEVLINT_BENCH_EDITS=N   edits per case (default 300)

BINARY defaults to target/release/fevlint. Each case starts `BINARY lsp` over pipes with
the 6.12.117 fixture kernel configured (kernel rules on, `FEVLINT_KERNEL_DEBOUNCE_MS=0`,
a private cache directory) and opens a generated script: one definition per traceable
6.12 function, `x64 a0` each (`name(x64 a0)`, names from the kernel's ftrace list in its
order), LINES lines (default 5,000 and 50,000). Such a script draws thousands of findings
(T401, A302, K203, N101), as a generated or long-lived script does.

- push: a client without pull diagnostics. 300 edits at random places (a character typed,
  then deleted), each one `didChange` timed to the complete `publishDiagnostics` of its
  version: "read" when its last byte has been read, "parsed" when `json.loads` has turned
  it into objects (what a client library does next). An edit that leaves the findings as
  they were gets no publish; a request the server does not know, sent right after the
  edit, tells the client so (its error reply comes after any publish of the edit).
- pull: a client with `textDocument.diagnostic`: the same edits, each followed by a
  `textDocument/diagnostic` with the previous `resultId`, timed, as the push, to its
  answer's last byte read ("read") and to its `json.loads` ("parsed");
  then the same request again with nothing changed (it must answer "unchanged"); then
  what the client's parse of the report costs by part (its messages, `source` or ranges
  emptied: the bytes against the objects).
- blocks: a client declaring `fevlintDiagnosticBlocks` with Neovim 0.11's capabilities and
  name (what editors/nvim sends): the same edits, each timed to its `fevlint/diagnosticBlocks`
  notification read and parsed, with the bytes and blocks each one carries; the anchor is
  a frame of the push's whole report for this client, as Neovim would get it without blocks.
- workspace: a folder of 500 scripts (the same kind, 100 lines each) under a
  `fevlint.toml` naming 4 kernels, no document open: `workspace/diagnostic` timed to the
  first full report; then one file is opened and edited, and a second `workspace/diagnostic`
  with the previous result ids must report only that file in full.

Memory: the server's peak (VmHWM) and its resident size after the edits, and per finding
the difference between this script's resident size and a control script's (the same
script with the codes it draws ignored: the kernel loaded, no finding kept), divided by
the findings. The resident size swings with the allocator's arenas (hundreds of bytes a
finding between runs), so where gdb is installed the live heap is measured the same way
too: glibc's `malloc_stats()` "in use bytes", called in the server by gdb after opening.

Bytes per finding: the opened document's diagnostics as JSON, by field, for the push
client (no capabilities: notes in the message, no rule link) and, opened again, with
VS Code's and Neovim 0.11's publishDiagnostics capabilities (related information, the
rule link only for VS Code, which declares `codeDescriptionSupport`).
"""

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "fixtures", "kernels")
K612 = os.path.join(KERNELS, "6.12.117+deb12-amd64")
EDITS = int(os.environ.get("FEVLINT_BENCH_EDITS", "300"))


def frame(msg):
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def traceable_names():
    """The functions listed once in the 6.12 ftrace list (no `.`), in its order: what
    `cargo bench --bench lsp`'s realistic script defines."""
    raw = subprocess.run(["zstd", "-dc", os.path.join(K612, "available_filter_functions.zst")],
                         check=True, capture_output=True).stdout.decode()
    names = [line.split()[0] for line in raw.splitlines() if line.split()]
    count = {}
    for n in names:
        count[n] = count.get(n, 0) + 1
    return [n for n in names if "." not in n and count[n] == 1]


def script(lines, names, params="x64 a0"):
    """As the bench's realistic script, each definition `name(x64 a0)`: a comment every
    fifth line, then one definition per function (blank lines when they run out)."""
    out, it = [], iter(names)
    while len(out) < lines:
        if len(out) % 5 == 4:
            out.append(f"# group {len(out) // 5}")
            continue
        name = next(it, None)
        out.append(f"{name}({params})" if name else "")
    return "".join(line + "\n" for line in out)


# The anchor: a process that answers each line it reads with one stored frame (the size
# of a publish), so that the same client code times the pipe and its own reading of that
# many bytes, in the same run, under the same load.
ECHO = """
import sys
body = sys.stdin.buffer.read(int(sys.stdin.buffer.readline()))
frame = b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body
while sys.stdin.buffer.readline():
    sys.stdout.buffer.write(frame)
    sys.stdout.buffer.flush()
"""


class Server:
    def __init__(self, binary, cache, argv=None, stderr=None):
        env = dict(os.environ, FEVLINT_CACHE_DIR=cache, FEVLINT_KERNEL_DEBOUNCE_MS="0")
        self.proc = subprocess.Popen(argv or [binary, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr or subprocess.DEVNULL, env=env, bufsize=0)
        self.out = open(self.proc.stdout.fileno(), "rb", buffering=1 << 20, closefd=False)
        self.next_id = 1
        self.pending = []

    def status(self, key):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def send(self, msg):
        self.proc.stdin.write(frame(msg))

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def ask(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        return i

    def cpu(self):
        """The server's CPU time so far (user + system, seconds)."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def read_raw(self):
        """One message's body, when its last byte has been read (`self.first`: when its
        header's first byte had been)."""
        length = None
        self.first = None
        while True:
            line = self.out.readline()
            if self.first is None:
                self.first = time.perf_counter()
            if not line:
                raise EOFError("the server closed its output")
            line = line.strip()
            if not line:
                if length is None:
                    continue
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        body = bytearray(length)
        view, got = memoryview(body), 0
        while got < length:
            n = self.out.readinto(view[got:])
            if not n:
                raise EOFError("the server closed its output")
            got += n
        return bytes(body)

    def read(self):
        m = json.loads(self.read_raw())
        if "method" in m and "id" in m:
            self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
        return m

    def answer(self, i):
        while True:
            m = self.read()
            if m.get("id") == i and "method" not in m:
                return m

    def initialize(self, capabilities, options=None, folders=None):
        params = {"capabilities": capabilities, "initializationOptions": options or {}}
        if folders:
            params["workspaceFolders"] = [{"uri": "file://" + f, "name": os.path.basename(f)} for f in folders]
            params["rootUri"] = "file://" + folders[0]
        self.answer(self.ask("initialize", params))
        self.notify("initialized", {})

    def stop(self):
        try:
            self.answer(self.ask("shutdown", None))
            self.notify("exit", None)
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (EOFError, BrokenPipeError, subprocess.TimeoutExpired):
            self.proc.kill()


class Anchor:
    """Pipe round trips of a frame of `body` through the echo process, each timed from the
    request to the frame's last byte read ("read") and to its `json.loads` ("parsed")."""

    def __init__(self, body):
        self.e = Server(None, "", [sys.executable, "-c", ECHO])
        self.e.proc.stdin.write(b"%d\n" % len(body) + body)
        self.read_t, self.parsed_t = [], []

    def once(self):
        start = time.perf_counter()
        self.e.proc.stdin.write(b"\n")
        raw = self.e.read_raw()
        self.read_t.append(time.perf_counter() - start)
        json.loads(raw)
        self.parsed_t.append(time.perf_counter() - start)

    def stop(self):
        self.e.proc.stdin.close()
        self.e.proc.wait()


def live_heap(s, stderr):
    """The server's live heap (bytes): glibc's `malloc_stats()` total "in use bytes",
    printed to the server's stderr (the file `stderr`) when gdb calls it; None without gdb."""
    if not shutil.which("gdb"):
        return None
    subprocess.run(["gdb", "-p", str(s.proc.pid), "-batch", "-ex", "call (void)malloc_stats()"],
                   capture_output=True, timeout=120)
    stderr.flush()
    with open(stderr.name) as f:
        inuse = [int(line.split("=")[1]) for line in f if line.strip().startswith("in use bytes")]
    return inuse[-1] if inuse else None


# What VS Code 1.65 and Neovim 0.11 declare for pushed diagnostics (pytest-lsp's records).
CLIENTS = {
    "VS Code": {"relatedInformation": True, "tagSupport": {"valueSet": [1, 2]}, "versionSupport": False,
                "codeDescriptionSupport": True, "dataSupport": True},
    "Neovim 0.11": {"relatedInformation": True, "tagSupport": {"valueSet": [1, 2]}, "dataSupport": True},
}


def fields(diagnostics):
    """Bytes per finding of the diagnostics' compact JSON, and per field."""
    n = max(len(diagnostics), 1)
    total = len(json.dumps(diagnostics, separators=(",", ":")))
    per = {}
    for d in diagnostics:
        for k, v in d.items():
            per[k] = per.get(k, 0) + len(k) + 3 + len(json.dumps(v, separators=(",", ":"))) + 1
    parts = ", ".join(f"{k} {v / n:.0f}" for k, v in sorted(per.items(), key=lambda kv: -kv[1]))
    return f"{total / n:.0f} B ({parts})"


def bytes_per_finding(binary, n, names, cache):
    text = script(n, names)
    for client, caps in CLIENTS.items():
        s = Server(binary, cache)
        s.initialize({"textDocument": {"publishDiagnostics": caps}}, {"kernels": [K612]})
        opened = open_and_settle(s, "file:///bench/generated.fev", text, False)
        print(f"  bytes per finding with {client}'s capabilities: {fields(opened['diagnostics'])}")
        s.stop()


def pct(times, p):
    s = sorted(times)
    return s[round((len(s) - 1) * p)] * 1e3


def summary(times):
    return f"p50 {pct(times, 0.5):6.2f} ms  p99 {pct(times, 0.99):6.2f} ms  max {max(times) * 1e3:6.2f} ms"


def kernel_ready(m):
    return m.get("method") == "fevlint/status" and all(k.get("state") != "loading" for k in m["params"]["kernels"])


def open_and_settle(s, uri, text, pull):
    """Opens `text`; returns its findings once the kernel's are in. The kernel loads in
    the background and its end re-checks the document; until the client first pulls, the
    document's findings are pushed (a pulling client then asks for the report)."""
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}})
    while True:
        m = s.read()
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
            if any(d["code"][0] in "KTA" for d in m["params"]["diagnostics"]):
                break
    if not pull:
        return m["params"]
    return s.answer(s.ask("textDocument/diagnostic", {"textDocument": {"uri": uri}}))["result"]


def edits(lines, seed=0x2545F491):
    """(line, character, text, end character) pairs: a character typed, then deleted."""
    rng = random.Random(seed)
    out = []
    while len(out) < EDITS:
        line = rng.randrange(len(lines))
        ch = rng.randrange(len(lines[line]) + 1)
        out.append((line, ch, ch, "x"))
        out.append((line, ch, ch + 1, ""))
    return out


def change(uri, version, line, c0, c1, text):
    return {"textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": c0},
                                          "end": {"line": line, "character": c1}}, "text": text}]}


class Timed:
    """What `timed_edits` measured, one entry per edit (sizes, first_t and answers only for
    the edits that were answered)."""

    def __init__(self):
        self.read_t, self.parsed_t, self.first_t, self.sizes, self.answers, self.skipped = [], [], [], [], [], 0


def each_edit(s, uri, lines, floor):
    """Sends each of `edits(lines)` to the open document `uri` as version 2 on, after one
    interleaved sample of `floor` (an Anchor); yields (version, when it was sent)."""
    version = 1
    for (line, c0, c1, t) in edits(lines):
        floor.once()
        version += 1
        start = time.perf_counter()
        s.notify("textDocument/didChange", change(uri, version, line, c0, c1, t))
        yield version, start


def timed_edits(s, uri, lines, floor, method):
    """Makes each of `edits(lines)` to the open document `uri` (version 2 on), each followed by
    a barrier request, and times the notification `method` of that edit's version: when its
    last byte was read, when json.loads had parsed it, when its first byte was read. The
    barrier's answer arriving first means the server sent nothing for the edit (skipped).
    `floor` (an Anchor) takes one interleaved sample per edit."""
    timed = Timed()
    for version, start in each_edit(s, uri, lines, floor):
        barrier = s.ask("fevlint/benchBarrier", {})
        while True:
            raw = s.read_raw()
            got = time.perf_counter()
            m = json.loads(raw)
            done = time.perf_counter()
            if m.get("method") == method and m["params"].get("version") == version:
                timed.first_t.append(s.first - start)
                timed.read_t.append(got - start)
                timed.parsed_t.append(done - start)
                timed.sizes.append(len(raw))
                timed.answers.append(m)
                s.answer(barrier)
                break
            if m.get("id") == barrier:
                timed.skipped += 1
                timed.read_t.append(got - start)
                timed.parsed_t.append(got - start)
                break
    return timed


def push(binary, n, names, cache):
    text = script(n, names)
    lines = text.splitlines()
    err = tempfile.NamedTemporaryFile("w+", prefix="fevlint-bench-stderr-")
    s = Server(binary, cache, stderr=err)
    s.initialize({}, {"kernels": [K612]})
    uri = "file:///bench/generated.fev"
    opened = open_and_settle(s, uri, text, False)
    found = len(opened["diagnostics"])
    codes = sorted({d["code"] for d in opened["diagnostics"]})
    settle(s)
    rss_open = s.status("VmRSS")
    heap_open = live_heap(s, err)
    print(f"  bytes per finding (this client: no capabilities): {fields(opened['diagnostics'])}")
    floor = Anchor(json.dumps({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                               "params": opened}).encode())
    cpu = s.cpu()
    timed = timed_edits(s, uri, lines, floor, "textDocument/publishDiagnostics")
    read_t, parsed_t, first_t, sizes, skipped = timed.read_t, timed.parsed_t, timed.first_t, timed.sizes, timed.skipped
    cpu = (s.cpu() - cpu) / len(read_t)
    rss, hwm = s.status("VmRSS"), s.status("VmHWM")
    s.stop()
    floor.stop()
    size = sum(sizes) / len(sizes) / 1024 if sizes else 0
    print(f"push {n} lines, {found} findings: edit -> publish read {summary(read_t)}")
    if first_t:
        print(f"  its first byte {summary(first_t)}; server CPU per edit {cpu * 1e3:.1f} ms (10 ms ticks, mean)")
    print(f"  parsed by json.loads {summary(parsed_t)}; {len(sizes)} publishes of {size:.0f} KB on average, "
          f"{skipped} edits left the findings unchanged (no publish)")
    print(f"  anchor, the same client reading a frame of the first publish's size through a pipe from a "
          f"process that only writes it (interleaved): read {summary(floor.read_t)}; "
          f"parsed p50 {pct(floor.parsed_t, 0.5):.2f} ms")
    print(f"  server RSS after the edits {rss / 1024:.0f} MB, peak {hwm / 1024:.0f} MB")
    err.close()
    return found, rss_open, codes, heap_open


def blocks(binary, n, names, cache):
    """Edit -> `fevlint/diagnosticBlocks` of its version, for a client like editors/nvim."""
    text = script(n, names)
    lines = text.splitlines()
    uri = "file:///bench/generated.fev"
    # Without blocks, this client would get this publish after every edit (the anchor).
    s = Server(binary, cache)
    caps = {"textDocument": {"publishDiagnostics": CLIENTS["Neovim 0.11"]}}
    s.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "capabilities": caps, "clientInfo": {"name": "Neovim", "version": "0.11.4"},
        "initializationOptions": {"kernels": [K612]}}})
    s.answer(0)
    s.notify("initialized", {})
    whole = open_and_settle(s, uri, text, False)
    s.stop()
    s = Server(binary, cache)
    caps = dict(caps, experimental={"fevlintDiagnosticBlocks": True})
    s.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "capabilities": caps, "clientInfo": {"name": "Neovim", "version": "0.11.4"},
        "initializationOptions": {"kernels": [K612]}}})
    s.answer(0)
    s.notify("initialized", {})
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}})
    held = {}
    while True:
        m = s.read()
        if m.get("method") == "fevlint/diagnosticBlocks":
            for b in m["params"]["blocks"]:
                held[b["index"]] = b["diagnostics"]
            if any(d["code"][0] in "KTA" for b in held.values() for d in b):
                break
    found = sum(len(b) for b in held.values())
    assert found == len(whole["diagnostics"]), (found, len(whole["diagnostics"]))
    settle(s)
    floor = Anchor(json.dumps({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                               "params": whole}).encode())
    cpu = s.cpu()
    timed = timed_edits(s, uri, lines, floor, "fevlint/diagnosticBlocks")
    read_t, parsed_t, sizes, skipped = timed.read_t, timed.parsed_t, timed.sizes, timed.skipped
    listed = [len(m["params"]["blocks"]) for m in timed.answers]
    cpu = (s.cpu() - cpu) / len(read_t)
    s.stop()
    floor.stop()
    size = sum(sizes) / len(sizes) / 1024 if sizes else 0
    print(f"blocks {n} lines, {found} findings: edit -> blocks read {summary(read_t)}; server CPU per edit "
          f"{cpu * 1e3:.1f} ms (10 ms ticks, mean)")
    print(f"  parsed by json.loads {summary(parsed_t)}; {len(sizes)} notifications of {size:.1f} KB on average "
          f"(max {max(sizes, default=0) / 1024:.1f} KB), {sum(listed) / max(len(listed), 1):.2f} blocks each "
          f"(max {max(listed, default=0)}), {skipped} edits left the findings unchanged (none sent)")
    print(f"  anchor, the whole report this client would be pushed instead ({len(json.dumps(whole)) / 1024:.0f} KB) "
          f"through a pipe (interleaved): read {summary(floor.read_t)}; "
          f"parsed {summary(floor.parsed_t)}")


def settle(s, quiet=3.0):
    """Lets the server finish what it does after a load (a check, then nothing), for
    `quiet` seconds, answering requests all along."""
    deadline = time.monotonic() + quiet
    found = None
    while time.monotonic() < deadline:
        i = s.ask("fevlint/benchBarrier", {})
        while True:
            m = s.read()
            if m.get("method") == "textDocument/publishDiagnostics":
                found = len(m["params"]["diagnostics"])
            if m.get("id") == i:
                break
        time.sleep(0.2)
    return found


def warm(binary, n, names, cache):
    """Opens the script once in a server of its own, so that the kernel's cache is written
    before anything is measured (the first server of a cache directory builds it, and holds
    tens of MB while it does: that was thousands of bytes "per finding")."""
    s = Server(binary, cache)
    s.initialize({}, {"kernels": [K612]})
    open_and_settle(s, "file:///bench/warm.fev", script(n, names), False)
    settle(s, 1.0)
    s.stop()


def control_rss(binary, n, names, cache, codes):
    """The resident size, live heap (or None) and findings of the control: the same script
    with the codes it draws ignored (`ignore` setting), so that the kernel does the same
    work and the per-line caches hold the same lines, but the document keeps no finding."""
    text = script(n, names)
    err = tempfile.NamedTemporaryFile("w+", prefix="fevlint-bench-stderr-")
    s = Server(binary, cache, stderr=err)
    s.initialize({}, {"kernels": [K612], "ignore": codes})
    uri = "file:///bench/control.fev"
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}})
    found = 0
    while True:
        m = s.read()
        if m.get("method") == "textDocument/publishDiagnostics":
            found = len(m["params"]["diagnostics"])
        if kernel_ready(m):
            break
    # The check after the load, then quiet.
    again = settle(s)
    found = found if again is None else again
    rss = s.status("VmRSS")
    heap = live_heap(s, err)
    s.stop()
    err.close()
    return rss, heap, found


def pull(binary, n, names, cache):
    text = script(n, names)
    lines = text.splitlines()
    s = Server(binary, cache)
    caps = {"textDocument": {"diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False}}}
    s.initialize(caps, {"kernels": [K612]})
    uri = "file:///bench/generated.fev"
    report = open_and_settle(s, uri, text, True)
    found = len(report["items"])
    result_id = report.get("resultId")
    floor = Anchor(json.dumps({"jsonrpc": "2.0", "id": 1, "result": report}).encode())
    times, read_t, unchanged = [], [], []
    pushed = 0
    for version, start in each_edit(s, uri, lines, floor):
        i = s.ask("textDocument/diagnostic", {"textDocument": {"uri": uri}, "previousResultId": result_id})
        while True:
            raw = s.read_raw()
            read = time.perf_counter() - start
            m = json.loads(raw)
            if m.get("method") == "textDocument/publishDiagnostics":
                pushed += 1
            if m.get("id") == i:
                break
        times.append(time.perf_counter() - start)
        read_t.append(read)
        r = m["result"]
        result_id = r.get("resultId", result_id)
        start = time.perf_counter()
        again = s.answer(s.ask("textDocument/diagnostic", {"textDocument": {"uri": uri},
                                                           "previousResultId": result_id}))["result"]
        unchanged.append(time.perf_counter() - start)
        assert again["kind"] == "unchanged", again["kind"]
    s.stop()
    floor.stop()
    print(f"pull {n} lines, {found} findings: edit -> full report read {summary(read_t)}")
    print(f"  anchor, a frame of the report's size through a pipe, read (interleaved): {summary(floor.read_t)}")
    print(f"  edit -> full report parsed by json.loads {summary(times)}; anchor parsed {summary(floor.parsed_t)}")
    print(f"  the same request again (\"unchanged\") {summary(unchanged)}; {pushed} publishes pushed besides")
    anatomy(report)


def anatomy(report, runs=30):
    """What the client's parse of a full report costs, by part: `json.loads` of the report
    as it is and with one part emptied (interleaved, p50), to tell the bytes from the
    objects (each diagnostic's range is three JSON objects)."""
    def emptied(part):
        items = []
        for d in report["items"]:
            d = dict(d)
            if part == "messages":
                d["message"] = ""
            elif part == "ranges":
                d["range"] = 0
            elif part in d:
                del d[part]
            items.append(d)
        return json.dumps({"jsonrpc": "2.0", "id": 1, "result": dict(report, items=items)}, separators=(",", ":")).encode()
    variants = {"as sent": emptied(None)}
    variants.update({f"{part} emptied": emptied(part) for part in ("messages", "source", "ranges")})
    times = {k: [] for k in variants}
    for _ in range(runs):
        for k, raw in variants.items():
            start = time.perf_counter()
            json.loads(raw)
            times[k].append(time.perf_counter() - start)
    parts = "; ".join(f"{k} {len(variants[k]) / 1e6:.2f} MB {pct(times[k], 0.5):.2f} ms" for k in variants)
    print(f"  the report parsed by json.loads, p50 of {runs}: {parts}")


def workspace(binary, names, cache, files=500, per_file=100):
    root = tempfile.mkdtemp(prefix="fevlint-ws-")
    kernels = ["6.12.117+deb12-amd64", "6.1.0-47-amd64", "6.1.0-56-amd64", "6.18.44-fc-v769"]
    with open(os.path.join(root, "fevlint.toml"), "w") as f:
        f.write("kernels = [" + ", ".join(json.dumps(os.path.join(KERNELS, k)) for k in kernels) + "]\n")
    for i in range(files):
        sub = os.path.join(root, f"tools{i % 10}")
        os.makedirs(sub, exist_ok=True)
        chunk = [names[(i * per_file + j) % len(names)] for j in range(per_file)]
        with open(os.path.join(sub, f"s{i}.fev"), "w") as f:
            f.write("".join(f"{n}(x64 a0)\n" for n in chunk))
    def cli():
        """The anchor: `fevlint check` of the same folder (its fevlint.toml), whole process."""
        start, used = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([binary, "check", "--format", "json", root], capture_output=True,
                       env=dict(os.environ, FEVLINT_CACHE_DIR=cache))
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.perf_counter() - start, now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime

    cold = cli()  # also fills the kernels' cache for the server
    s = Server(binary, cache)
    caps = {"textDocument": {"diagnostic": {"dynamicRegistration": False}},
            "workspace": {"diagnostics": {"refreshSupport": False}}}
    cpu = s.cpu()
    s.initialize(caps, {}, [root])
    start = time.perf_counter()
    r = s.answer(s.ask("workspace/diagnostic", {"previousResultIds": []}))["result"]
    first = time.perf_counter() - start
    cpu = s.cpu() - cpu
    items = r["items"]
    full = [x for x in items if x["kind"] == "full"]
    findings = sum(len(x["items"]) for x in full)
    print(f"workspace: {files} scripts x {len(kernels)} kernels: first workspace/diagnostic {first:.2f} s "
          f"(server CPU {cpu:.2f} s), {len(full)} full reports, {findings} findings")
    wall, used = cli()
    print(f"  anchor, `fevlint check` of the folder: {wall:.2f} s (CPU {used:.2f} s; its first run, filling the "
          f"kernel cache: {cold[0]:.2f} s, CPU {cold[1]:.2f} s)")
    ids = [{"uri": x["uri"], "value": x["resultId"]} for x in items if x.get("resultId")]
    path = os.path.join(root, "tools3", "s3.fev")
    uri = "file://" + path
    with open(path) as f:
        text = f.read()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}})
    s.notify("textDocument/didChange", change(uri, 2, 0, 0, 0, "x"))
    start = time.perf_counter()
    r = s.answer(s.ask("workspace/diagnostic", {"previousResultIds": ids}))["result"]
    second = time.perf_counter() - start
    items = r["items"]
    resent = [x["uri"] for x in items if x["kind"] == "full"]
    print(f"  after an edit to one file: {second * 1e3:.1f} ms, {len(resent)} full report(s) "
          f"({', '.join(os.path.basename(u) for u in resent)}), {len(items) - len(resent)} unchanged")
    s.stop()
    shutil.rmtree(root, ignore_errors=True)


def main():
    args = sys.argv[1:]
    cases = ("push", "pull", "blocks", "workspace", "all")
    binary = args.pop(0) if args and args[0] not in cases and not args[0].isdigit() else "target/release/fevlint"
    which = args.pop(0) if args and args[0] in cases else "all"
    sizes = [int(a) for a in args] or [5_000, 50_000]
    names = traceable_names()
    cache = tempfile.mkdtemp(prefix="fevlint-bench-publish-")
    try:
        for n in sizes:
            if which in ("push", "all"):
                warm(binary, n, names, cache)
                found, rss, codes, heap = push(binary, n, names, cache)
                base, base_heap, base_found = control_rss(binary, n, names, cache, codes)
                if found > base_found:
                    print(f"  memory per finding: resident after opening, ({rss} - {base} KB for the same script with "
                          f"its codes ignored, {base_found} findings) / {found - base_found} = "
                          f"{(rss - base) * 1024 / (found - base_found):.0f} B")
                    if heap is not None and base_heap is not None:
                        print(f"  live heap per finding (malloc_stats in use after opening): ({heap} - {base_heap} B) "
                              f"/ {found - base_found} = {(heap - base_heap) / (found - base_found):.0f} B")
                bytes_per_finding(binary, n, names, cache)
            if which in ("pull", "all"):
                pull(binary, n, names, cache)
            if which in ("blocks", "all"):
                blocks(binary, n, names, cache)
        if which in ("workspace", "all"):
            workspace(binary, names, cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
