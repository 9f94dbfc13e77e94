#!/usr/bin/env python3
"""A logging proxy between an editor and `fevlint lsp` (scripts/bench-editors.py with
FEVLINT_BENCH_TRACE=1): forwards every message as it is, and appends one JSON line per
message to LOG (time, direction, method, id, document, size).

  lsp-trace.py LOG BINARY ARGS...         the proxy (the editor starts it as the server)
  lsp-trace.py --summary LOG URI-PART...  per method, for documents whose URI contains
                                          every URI-PART: how many, the answer's time
                                          (request -> response, as the proxy saw it) and size
"""

import json
import re
import subprocess
import sys
import threading
import time


def messages(stream):
    while True:
        length = None
        while True:
            line = stream.readline()
            if not line:
                return
            if line in (b"\r\n", b"\n"):
                if length is not None:
                    break
                continue
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        body = stream.read(length)
        if len(body) < length:
            return
        yield body


def peek(body):
    """The `method`, `id` and document of a large message, from its first and last 4 KB."""
    ends = body[:4096] + b" " + body[-4096:]
    method = re.search(rb'"method":"([^"]*)"', body[:4096])
    ident = re.search(rb'"id":(\d+)', ends)
    uri = re.search(rb'"uri":"([^"]*)"', body[:4096])
    return ({"method": method and method.group(1).decode(), "id": ident and int(ident.group(1))},
            uri and uri.group(1).decode())


def pump(src, dst, direction, log, lock):
    for body in messages(src):
        dst.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        dst.flush()
        now = time.monotonic()
        if len(body) <= 1 << 16:
            try:
                m = json.loads(body)
            except ValueError:
                m = {}
            params = m.get("params") if isinstance(m.get("params"), dict) else {}
            uri = (params.get("textDocument") or {}).get("uri") or params.get("uri")
        else:
            # A large body (a publish, an outline): its method, id and document read from
            # its ends, not parsed (parsing 18 MB here held the next message back).
            m, uri = peek(body)
        rec = {"t": now, "dir": direction, "method": m.get("method"), "id": m.get("id"), "uri": uri,
               "bytes": len(body)}
        if direction == "out" and b'"edits":[' in body[:200] and len(body) < 1 << 21:
            # A semantic tokens delta: where its edits start and how much they carry.
            edits = json.loads(body).get("result", {}).get("edits") or []
            rec["edits"] = [(e["start"], e["deleteCount"], len(e.get("data") or [])) for e in edits]
        if m.get("method") == "workspace/didChangeWatchedFiles":
            rec["changes"] = params.get("changes")
        with lock:
            log.write(json.dumps(rec) + "\n")
            log.flush()
    dst.close()


def proxy(log_path, argv):
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    lock = threading.Lock()
    with open(log_path, "a") as log:
        up = threading.Thread(target=pump, args=(sys.stdin.buffer, server.stdin, "in", log, lock), daemon=True)
        up.start()
        # Buffered: a raw pipe's read(n) may return fewer than n bytes.
        pump(open(server.stdout.fileno(), "rb", buffering=1 << 20, closefd=False), sys.stdout.buffer, "out", log,
             lock)
    server.wait()


def summary(log_path, parts):
    recs = [json.loads(line) for line in open(log_path)]
    asked = {}  # (id) -> record, editor -> server requests
    rows = {}
    for r in recs:
        if r["dir"] == "in" and r["method"] and r["id"] is not None:
            asked[r["id"]] = r
        elif r["dir"] == "out" and r["method"] is None and r["id"] in asked:
            q = asked.pop(r["id"])
            if q["uri"] and all(p in q["uri"] for p in parts):
                row = rows.setdefault(q["method"], {"n": 0, "ms": [], "bytes": 0})
                row["n"] += 1
                row["ms"].append((r["t"] - q["t"]) * 1e3)
                row["bytes"] += r["bytes"]
        elif r["method"] and r["uri"] and all(p in r["uri"] for p in parts):
            row = rows.setdefault(r["method"] + (" (editor)" if r["dir"] == "in" else " (server)"),
                                  {"n": 0, "ms": [], "bytes": 0})
            row["n"] += 1
            row["bytes"] += r["bytes"]
    for method, row in sorted(rows.items(), key=lambda kv: -kv[1]["n"]):
        ms = sorted(row["ms"])
        cost = (f"answer p50 {ms[len(ms) // 2]:.1f} ms, max {ms[-1]:.1f} ms, " if ms else "")
        print(f"  {method}: {row['n']} times, {cost}{row['bytes'] / row['n'] / 1024:.0f} KB each")


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2], sys.argv[3:])
    else:
        proxy(sys.argv[1], sys.argv[2:])
