#!/usr/bin/env bash
# Every performance figure in the README, whole process, each beside its anchor in the
# same run (interleaved), with the machine, load and commit; a private FEVLINT_CACHE_DIR,
# so nothing is read from ~/.cache/fevlint. Runs from a clean clone: every input it
# checks is generated here (target/bench-scripts is emptied first, so a file an older run
# left behind can never stand in for one this run failed to write). Report:
# target/bench/REPORT.md (the whole-process table, then the LSP, DWARF and core dump
# benches' own output); the README's tables are copied from it.
#
#   scripts/bench.sh            # whole-process table, LSP bench, the editors' edit -> squiggle
#                               # (scripts/bench-editors.py); the DWARF bench if the -dbg
#                               # vmlinux is there (scripts/fetch-dbg-vmlinux.sh), the core
#                               # dump bench if the test dumps are (FEVLINT_REAL_TOOLS=1
#                               # cargo test -p fevlint-memory --test kernel_dumps)
#   FEVLINT_BENCH_RUNS=5 scripts/bench.sh    # fewer runs per row
#   scripts/bench.sh --quick    # every row once on the debug build, no warm-up (no release
#                               # build; a few minutes): .ci/run runs it so that the
#                               # script cannot break silently; its figures are not
#                               # for the README (report: target/bench-quick/REPORT.md)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
command -v pahole >/dev/null || { echo "bench: pahole/pfunct (Debian: dwarves) are the anchors" >&2; exit 1; }
command -v zstd >/dev/null || { echo "bench: zstd is needed to give pahole the raw BTF (Debian: zstd)" >&2; exit 1; }
target=$(cargo metadata --format-version 1 --no-deps --locked | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
if [ $quick = 1 ]; then
    profile=dev; bin=$target/debug/fevlint; out=$PWD/target/bench-quick
    export FEVLINT_BENCH_RUNS=${FEVLINT_BENCH_RUNS:-1} FEVLINT_BENCH_QUICK=1
else
    profile=release; bin=$target/release/fevlint; out=$PWD/target/bench
fi
filter() { grep -v "^ *Compiling\|^ *Finished\|^ *Running\|loaded (BTF\|^warning: .*profile" || true; }
cargo build --profile $profile --locked -p fevlint 2>&1 | tail -1
scripts=$out/scripts
rm -rf "$scripts"
mkdir -p "$scripts"
# The scripts the rows check (generated from the fixtures by the benches themselves).
FEVLINT_BENCH_WRITE="$scripts" cargo bench --profile $profile --locked -p fevlint --bench lsp 2>&1 | grep wrote
cargo bench --profile $profile --locked -p fevlint --bench check -- --write "$scripts/one-field-1000.fev" \
    --write-repeated "$scripts/repeated-1000.fev" 2>&1 | grep wrote
FEVLINT_BENCH_BIN=$bin FEVLINT_BENCH_OUT=$out python3 scripts/bench.py
# The README's whole-process table is this run's, written here (--quick: only checked).
python3 scripts/bench-readme.py $([ $quick = 1 ] && echo --check) "$out/REPORT.md" README.md
echo
echo "## Language server (cargo bench --bench lsp: the server process, driven over stdio)" | tee -a "$out/REPORT.md"
export FEVLINT_CACHE_DIR; FEVLINT_CACHE_DIR=$(mktemp -d)
lsp_args=()
[ $quick = 0 ] || lsp_args=(-- 5000 realistic)
cargo bench --profile $profile --locked -p fevlint --bench lsp "${lsp_args[@]}" 2>&1 | filter | tee -a "$out/REPORT.md"
# Issue 26: edit -> complete publish and pull, by a Python client outside the server's
# code; memory per finding; the workspace report over 500 scripts x 4 kernels.
echo "## Language server, publish and pull (scripts/bench-lsp-publish.py)" | tee -a "$out/REPORT.md"
if [ $quick = 1 ]; then
    FEVLINT_BENCH_EDITS=20 python3 scripts/bench-lsp-publish.py "$bin" push 5000 2>&1 | tee -a "$out/REPORT.md"
else
    python3 scripts/bench-lsp-publish.py "$bin" all 2>&1 | tee -a "$out/REPORT.md"
fi
# Issue 26: edit -> squiggle in the real editors (Neovim, VS Code in code-server), each
# beside its 100-line anchor; the README's editor table is this run's. --quick: Neovim
# only, 4 edits on 5,000 lines, the splice only checked (code-server and Chromium cost minutes).
echo "## Editors, edit -> squiggle (scripts/bench-editors.py)" | tee -a "$out/REPORT.md"
if [ $quick = 1 ]; then
    FEVLINT_BENCH_EDITS=4 FEVLINT_BENCH_LINES=5000 python3 scripts/bench-editors.py "$bin" nvim 2>&1 | tee -a "$out/REPORT.md"
    python3 scripts/bench-readme.py --section editors --check "$out/REPORT.md" README.md
else
    python3 scripts/bench-editors.py "$bin" all 2>&1 | tee -a "$out/REPORT.md"
    python3 scripts/bench-readme.py --section editors "$out/REPORT.md" README.md
fi
if [ $quick = 1 ]; then
    echo "DWARF and core dump benches: not in the quick mode"
elif ls target/dbg-vmlinux/*.vmlinux >/dev/null 2>&1; then
    # drgn, the DWARF index's anchor, from PyPI into a private venv (0.0.26: later
    # releases no longer load a lone vmlinux with load_debug_info).
    [ -x target/bench-venv/bin/python ] || python3 -m venv target/bench-venv
    target/bench-venv/bin/python -c 'import drgn' 2>/dev/null || target/bench-venv/bin/pip install -q 'drgn==0.0.26'
    export FEVLINT_BENCH_PYTHON=$PWD/target/bench-venv/bin/python
    echo "## DWARF (cargo bench --bench dwarf)" | tee -a "$out/REPORT.md"
    cargo bench --locked -p fevlint --bench dwarf 2>&1 | filter | tee -a "$out/REPORT.md"
else
    echo "DWARF bench skipped: no target/dbg-vmlinux/*.vmlinux (scripts/fetch-dbg-vmlinux.sh)"
fi
if [ $quick = 0 ] && [ -d "$target/tmp/kernel_dumps" ]; then
    echo "## Core dumps (cargo bench -p fevlint-memory --bench open)" | tee -a "$out/REPORT.md"
    [ -x target/bench-venv-drgn/bin/python ] || python3 -m venv target/bench-venv-drgn
    target/bench-venv-drgn/bin/python -c 'import drgn' 2>/dev/null || target/bench-venv-drgn/bin/pip install -q drgn
    FEVLINT_DRGN_PYTHON=$PWD/target/bench-venv-drgn/bin/python cargo bench --locked -p fevlint-memory --bench open 2>&1 \
        | filter | tee -a "$out/REPORT.md"
elif [ $quick = 0 ]; then
    echo "core dump bench skipped: no $target/tmp/kernel_dumps (FEVLINT_REAL_TOOLS=1 cargo test -p fevlint-memory --test kernel_dumps)"
fi
rm -rf "$FEVLINT_CACHE_DIR"
echo "report: $out/REPORT.md"
