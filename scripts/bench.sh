#!/usr/bin/env bash
# Every performance figure in the README, whole process, each beside its anchor in the
# same run (interleaved), with the machine, load and commit; a private FEVLINT_CACHE_DIR,
# so nothing is read from ~/.cache/fevlint. Report: target/bench/REPORT.md (+ the LSP and
# DWARF benches' own output below it).
#
#   scripts/bench.sh            # whole-process table, LSP bench; the DWARF bench if the -dbg
#                               # vmlinux is there (scripts/fetch-dbg-vmlinux.sh), the core
#                               # dump bench if the test dumps are (cargo test -p
#                               # fevlint-memory --test kernel_dumps)
#   FEVLINT_BENCH_RUNS=5 scripts/bench.sh    # fewer runs per row
set -euo pipefail
cd "$(dirname "$0")/.."
command -v pahole >/dev/null || { echo "bench: pahole/pfunct (Debian: dwarves) are the anchors" >&2; exit 1; }
command -v zstd >/dev/null || { echo "bench: zstd is needed to give pahole the raw BTF (Debian: zstd)" >&2; exit 1; }
cargo build --release --locked -p fevlint 2>&1 | tail -1
mkdir -p target/bench-scripts target/bench
# The scripts the rows check (generated from the fixtures by the benches themselves).
FEVLINT_BENCH_WRITE="$PWD/target/bench-scripts" cargo bench --locked -p fevlint --bench lsp 2>&1 | grep wrote
cargo bench --locked -p fevlint --bench check -- --write "$PWD/target/bench-scripts/one-field-1000.fev" \
    --write-repeated "$PWD/target/bench-scripts/repeated-1000.fev" 2>&1 | grep wrote
python3 scripts/bench.py
echo
echo "## Language server (cargo bench --bench lsp: the server process, driven over stdio)"
export FEVLINT_CACHE_DIR; FEVLINT_CACHE_DIR=$(mktemp -d)
cargo bench --locked -p fevlint --bench lsp 2>&1 | grep -v "^ *Compiling\|^ *Finished\|^ *Running\|loaded (BTF" | tee -a target/bench/REPORT.md
if ls target/dbg-vmlinux/*.vmlinux >/dev/null 2>&1; then
    # drgn, the DWARF index's anchor, from PyPI into a private venv (0.0.26: later
    # releases no longer load a lone vmlinux with load_debug_info).
    [ -x target/bench-venv/bin/python ] || python3 -m venv target/bench-venv
    target/bench-venv/bin/python -c 'import drgn' 2>/dev/null || target/bench-venv/bin/pip install -q 'drgn==0.0.26'
    export FEVLINT_BENCH_PYTHON=$PWD/target/bench-venv/bin/python
    echo "## DWARF (cargo bench --bench dwarf)" | tee -a target/bench/REPORT.md
    cargo bench --locked -p fevlint --bench dwarf 2>&1 | grep -v "^ *Compiling\|^ *Finished\|^ *Running" | tee -a target/bench/REPORT.md
else
    echo "DWARF bench skipped: no target/dbg-vmlinux/*.vmlinux (scripts/fetch-dbg-vmlinux.sh)"
fi
if [ -d target/tmp/kernel_dumps ]; then
    echo "## Core dumps (cargo bench -p fevlint-memory --bench open)" | tee -a target/bench/REPORT.md
    [ -x target/bench-venv-drgn/bin/python ] || python3 -m venv target/bench-venv-drgn
    target/bench-venv-drgn/bin/python -c 'import drgn' 2>/dev/null || target/bench-venv-drgn/bin/pip install -q drgn
    FEVLINT_DRGN_PYTHON=$PWD/target/bench-venv-drgn/bin/python cargo bench --locked -p fevlint-memory --bench open 2>&1 \
        | grep -v "^ *Compiling\|^ *Finished\|^ *Running" | tee -a target/bench/REPORT.md
else
    echo "core dump bench skipped: no target/tmp/kernel_dumps (cargo test -p fevlint-memory --test kernel_dumps)"
fi
rm -rf "$FEVLINT_CACHE_DIR"
echo "report: target/bench/REPORT.md"
