#!/usr/bin/env python3
"""What each request an editor sends after an edit costs the server, measured by a client
outside the server's code (scripts/bench-editors.py runs it beside the editors).

  requests.py BINARY [LINES] [EDITS]

Starts `BINARY lsp` over pipes with VS Code's relevant client capabilities (pull
diagnostics, semantic tokens by range and delta, hierarchical symbols), opens the script
of scripts/bench-lsp-publish.py (LINES lines, default 50,000) with the 6.12 fixture kernel,
and after each of EDITS edits (default 10; an `x` typed at the end of a random definition's
function name, then deleted) sends, one after the other, what VS Code sends after an edit
(Neovim sends the delta tokens and reads the pushed diagnostics): each timed from the
request to its answer read and parsed (`json.loads`, as a client library does), with the
answer's size.
"""

import gc
import importlib.util
import json
import os
import random
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("publish", os.path.join(ROOT, "scripts", "bench-lsp-publish.py"))
P = importlib.util.module_from_spec(spec)
spec.loader.exec_module(P)

CAPS = {"textDocument": {
    "diagnostic": {"dynamicRegistration": True},
    "publishDiagnostics": {"relatedInformation": True},
    "semanticTokens": {"requests": {"range": True, "full": {"delta": True}}, "tokenTypes": [], "tokenModifiers": [],
                       "formats": ["relative"]},
    "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
    "inlayHint": {}, "foldingRange": {}, "codeAction": {}, "completion": {}}}


def main():
    binary = sys.argv[1]
    lines_n = int(sys.argv[2]) if len(sys.argv) > 2 else 50_000
    edits = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    text = P.script(lines_n, P.traceable_names())
    lines = text.splitlines()
    cache = tempfile.mkdtemp(prefix="fevlint-bench-requests-")
    os.environ.pop("FEVLINT_KERNEL_DEBOUNCE_MS", None)
    s = P.Server(binary, cache)
    try:
        s.initialize(CAPS, {"kernels": [P.K612]})
        uri = "file:///bench/generated.fev"
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}})
        while True:
            m = s.read()
            if m.get("method") == "textDocument/publishDiagnostics" and any(
                    d["code"][0] in "KTA" for d in m["params"]["diagnostics"]):
                break

        def timed(method, params):
            start = time.perf_counter()
            i = s.ask(method, params)
            while True:
                raw = s.read_raw()
                m = json.loads(raw)
                if m.get("id") == i and "method" not in m:
                    return (time.perf_counter() - start) * 1e3, len(raw), m

        _, _, full = timed("textDocument/semanticTokens/full", {"textDocument": {"uri": uri}})
        tokens, report = full["result"]["resultId"], None
        rng = random.Random(0x2545F491)
        defs = [(i, l.index("(")) for i, l in enumerate(lines) if "(" in l and not l.startswith("#")]
        costs, version = {}, 1
        for _ in range(edits):
            row, col = defs[rng.randrange(len(defs))]
            here = {"start": {"line": row, "character": col}, "end": {"line": row, "character": col}}
            visible = {"start": {"line": max(0, row - 25), "character": 0}, "end": {"line": row + 25, "character": 0}}
            for typed in (True, False):
                version += 1
                s.notify("textDocument/didChange", P.change(uri, version, row, col, col + (0 if typed else 1),
                                                            "x" if typed else ""))
                asks = [("textDocument/diagnostic", {"textDocument": {"uri": uri}, "previousResultId": report}),
                        ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": here,
                                                     "context": {"diagnostics": [], "triggerKind": 2}}),
                        ("textDocument/completion", {"textDocument": {"uri": uri}, "position": here["end"]}),
                        ("textDocument/semanticTokens/full/delta", {"textDocument": {"uri": uri},
                                                                    "previousResultId": tokens}),
                        ("textDocument/semanticTokens/range", {"textDocument": {"uri": uri}, "range": visible}),
                        ("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": visible}),
                        ("textDocument/foldingRange", {"textDocument": {"uri": uri}}),
                        ("textDocument/documentSymbol", {"textDocument": {"uri": uri}})]
                for method, params in asks:
                    ms, size, m = timed(method, params)
                    result = m.get("result") or {}
                    if method.endswith("/delta") and isinstance(result, dict):
                        tokens = result.get("resultId", tokens)
                    if method == "textDocument/diagnostic" and isinstance(result, dict):
                        report = result.get("resultId", report)
                    costs.setdefault(method, []).append((ms, size))
                    # Outside the timing: a parsed 18 MB outline left alive makes the
                    # client's garbage collector walk it during the next request's parse.
                    del m, result
                    gc.collect()
        for method, got in costs.items():
            ms = sorted(t for t, _ in got)
            size = max(b for _, b in got)
            print(f"  {method}: p50 {ms[len(ms) // 2]:.1f} ms, max {ms[-1]:.1f} ms, up to {size / 1024:,.0f} KB "
                  f"({len(ms)} requests)")
    finally:
        s.stop()
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
