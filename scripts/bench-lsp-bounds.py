#!/usr/bin/env python3
"""The language server's bounded cost, measured on the release binary (issue 21).

  scripts/bench-lsp-bounds.py [BINARY] [flood|huge|limit|all] [LINES]

BINARY defaults to target/release/fevlint. Each case starts `BINARY lsp` over pipes,
samples the server's RSS every 20 ms (VmRSS) and reads its peak (VmHWM) at the end:

- flood: a 500-line script whose every line repeats the first definition (499 N101
  diagnostics, ~170 KB per publish), then 10,000 incremental edits sent without
  reading anything, then read until the publish of the last version. Target: peak
  under 200 MB (publishes of superseded versions must not queue).
- huge: a 1,000,000-line document (19 MB, `vfs_read(x64 file)` on every line: 999,999
  N101), timed from `didOpen` to its publish or its refusal (`window/showMessage`).
  Target: under 3 s and 1 GB. Then a small document is opened and must be checked:
  the server keeps serving.
- limit: the same at LINES lines (default 99,999: the largest the server checks, one
  diagnostic on every line but the first): what a document just under the limit costs.

A run whose RSS passes 4 GB is stopped (the figure is then "over 4 GB").
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

LIMIT_KB = 4 << 20


def frame(msg):
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Server:
    def __init__(self, binary):
        self.cache = tempfile.mkdtemp(prefix="fevlint-bounds-")
        env = dict(os.environ, FEVLINT_CACHE_DIR=self.cache)
        self.proc = subprocess.Popen([binary, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.peak_rss = 0
        self.killed = False
        self.sampling = True
        self.sampler = threading.Thread(target=self.sample, daemon=True)
        self.sampler.start()
        self.next_id = 1

    def status(self, key):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def cpu(self):
        """The server's CPU time so far (user + system, seconds): less bent by a busy
        machine than the wall clock."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def sample(self):
        while self.sampling and self.proc.poll() is None:
            rss = self.status("VmRSS")
            self.peak_rss = max(self.peak_rss, rss)
            if rss > LIMIT_KB:
                self.killed = True
                self.proc.kill()
                return
            time.sleep(0.02)

    def send(self, msg):
        self.proc.stdin.write(frame(msg))

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        self.proc.stdin.flush()
        while True:
            m = self.read()
            if m.get("id") == i and "method" not in m:
                return m.get("result")

    def read(self):
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("the server closed its output" + (" (killed over 4 GB)" if self.killed else ""))
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        m = json.loads(self.proc.stdout.read(length))
        if "method" in m and "id" in m:
            self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
            self.proc.stdin.flush()
        return m

    def wait(self, pred):
        while True:
            m = self.read()
            if pred(m):
                return m

    def initialize(self):
        self.request("initialize", {"capabilities": {}})
        self.notify("initialized", {})

    def finish(self):
        hwm = self.status("VmHWM")
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (EOFError, BrokenPipeError, subprocess.TimeoutExpired):
            self.proc.kill()
        self.sampling = False
        return max(hwm, self.peak_rss)


def publish_of(uri, version):
    return lambda m: (m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                      and m["params"].get("version") == version)


def mb(kb):
    return f"{kb / 1024:.0f} MB"


def flood(binary):
    s = Server(binary)
    s.initialize()
    uri = "file:///tmp/fevlint-bounds/flood.fev"
    text = "vfs_read(x64 file)\n" * 500
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}})
    s.proc.stdin.flush()
    first = s.wait(publish_of(uri, 1))
    size = len(json.dumps(first))
    start = time.monotonic()
    edits = 10_000
    try:
        for v in range(2, edits + 2):
            # Each edit changes the findings (`xvfs_read` on the second line repeats nothing):
            # an edit that leaves them as they were is not published at all.
            if v % 2 == 0:
                change = {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
                          "text": "x"}
            else:
                change = {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}},
                          "text": ""}
            s.notify("textDocument/didChange",
                     {"textDocument": {"uri": uri, "version": v}, "contentChanges": [change]})
        s.proc.stdin.flush()
        sent = time.monotonic() - start
        received = []
        s.wait(lambda m: (m.get("method") == "textDocument/publishDiagnostics" and received.append(1) is None
                          and publish_of(uri, edits + 1)(m)))
        elapsed = time.monotonic() - start
        peak = s.finish()
        print(f"flood: {edits} edits sent without reading ({sent:.2f} s to send), one publish {size / 1024:.0f} KB: "
              f"{len(received)} publishes read, the last after {elapsed:.2f} s, peak RSS {mb(peak)}")
    except (EOFError, BrokenPipeError) as e:
        s.finish()
        print(f"flood: stopped: {e}; peak RSS over {mb(s.peak_rss)} after {time.monotonic() - start:.1f} s")


def huge(binary, lines=1_000_000):
    s = Server(binary)
    s.initialize()
    uri = "file:///tmp/fevlint-bounds/huge.fev"
    text = "vfs_read(x64 file)\n" * lines
    cpu = s.cpu()
    start = time.monotonic()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}})
    s.proc.stdin.flush()
    try:
        m = s.wait(lambda m: publish_of(uri, 1)(m) or m.get("method") == "window/showMessage")
        elapsed = time.monotonic() - start
        cpu = s.cpu() - cpu
        if m.get("method") == "window/showMessage":
            what = "refused: " + m["params"]["message"]
            s.wait(publish_of(uri, 1))
        else:
            what = f"published {len(m['params']['diagnostics'])} diagnostics"
        small = "file:///tmp/fevlint-bounds/small.fev"
        s.notify("textDocument/didOpen",
                 {"textDocument": {"uri": small, "languageId": "fev", "version": 1, "text": "vfs_read(x64 a, x64 a)\n"}})
        s.proc.stdin.flush()
        after = s.wait(publish_of(small, 1))
        serving = [d["code"] for d in after["params"]["diagnostics"]]
        peak = s.finish()
        print(f"huge: {lines:,} lines ({len(text) / 1e6:.1f} MB): {what} after {elapsed:.2f} s (server CPU {cpu:.2f} s), "
              f"peak RSS {mb(peak)}; then a small document: {serving}")
    except (EOFError, BrokenPipeError) as e:
        s.finish()
        print(f"huge: stopped: {e}; peak RSS over {mb(s.peak_rss)} after {time.monotonic() - start:.1f} s")


def main():
    args = sys.argv[1:]
    cases = ("flood", "huge", "limit", "all")
    binary = args.pop(0) if args and args[0] not in cases else "target/release/fevlint"
    which = args.pop(0) if args and args[0] in cases else "all"
    lines = int(args[0]) if args else 99_999
    if which in ("flood", "all"):
        flood(binary)
    if which in ("huge", "all"):
        huge(binary)
    if which in ("limit", "all"):
        huge(binary, lines)


if __name__ == "__main__":
    main()
