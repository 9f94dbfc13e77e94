#!/usr/bin/env python3
"""What Neovim's own handling of a publish costs per finding (issue 26): the 50,000-line
script of scripts/bench-lsp-publish.py is checked by `BINARY lsp` once, its real publish
(with the kernel's findings) kept, then replayed in headless Neovim 0.11 (`--clean`, the
script in a buffer) with 500 to 18,140 of its findings (findings past 4,535 are copies one
column on): `vim.json.decode` of the message, the conversion vim.lsp.diagnostic makes, then
`vim.diagnostic.set` with its default handlers (underline, signs). Each the best of 5, in
CPU time (`getrusage`: the machine's load counts little).

  scripts/bench-editors/nvim-scaling.py [BINARY]
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
spec = importlib.util.spec_from_file_location("publish", os.path.join(ROOT, "scripts", "bench-lsp-publish.py"))
P = importlib.util.module_from_spec(spec)
spec.loader.exec_module(P)
spec = importlib.util.spec_from_file_location("editors", os.path.join(ROOT, "scripts", "bench-editors.py"))
E = importlib.util.module_from_spec(spec)
spec.loader.exec_module(E)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "fevlint")
    tmp = tempfile.mkdtemp(prefix="fevlint-nvim-scaling-")
    try:
        script = os.path.join(tmp, "generated.fev")
        with open(script, "w") as f:
            f.write(P.script(50_000, P.traceable_names()))
        s = P.Server(binary, os.path.join(tmp, "cache"))
        try:
            s.initialize({"textDocument": {"publishDiagnostics": {"relatedInformation": True}}}, {"kernels": [P.K612]})
            with open(script) as f:
                text = f.read()
            uri = "file://" + script
            s.notify("textDocument/didOpen",
                     {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}})
            while True:
                raw = s.read_raw()
                m = json.loads(raw)
                if m.get("method") == "textDocument/publishDiagnostics" and any(
                        d["code"][0] in "KTA" for d in m["params"]["diagnostics"]):
                    break
        finally:
            s.stop()
        publish = os.path.join(tmp, "publish.json")
        with open(publish, "wb") as f:
            f.write(raw)
        out = subprocess.run([E.nvim_binary(), "--headless", "--clean", "-l", os.path.join(HERE, "nvim-scaling.lua"),
                              publish, script], check=True, capture_output=True, text=True, timeout=600,
                             stdin=subprocess.DEVNULL)
        for line in (out.stdout + out.stderr).splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                print(f"{r['n']:>6,} findings: decode {r['decode']:.1f} ms, convert {r['convert']:.1f} ms, "
                      f"vim.diagnostic.set {r['set']:.1f} ms (underline {r['underline']:.1f}, signs {r['signs']:.1f})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
