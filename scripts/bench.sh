#!/usr/bin/env bash
# Every performance figure in the README, whole process, each beside its anchor in the
# same run (interleaved), with the machine, load and commit; a private FEVLINT_CACHE_DIR,
# so nothing is read from ~/.cache/fevlint. Report: target/bench/REPORT.md (+ the LSP and
# DWARF benches' own output below it).
#
#   scripts/bench.sh            # whole-process table, LSP bench, DWARF bench (if the -dbg
#                               # vmlinux is there: scripts/fetch-dbg-vmlinux.sh)
#   FEVLINT_BENCH_RUNS=5 scripts/bench.sh    # fewer runs per row
set -euo pipefail
cd "$(dirname "$0")/.."
command -v pahole >/dev/null || { echo "bench: pahole/pfunct (Debian: dwarves) are the anchors" >&2; exit 1; }
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
    echo "## DWARF (cargo bench --bench dwarf)" | tee -a target/bench/REPORT.md
    cargo bench --locked -p fevlint --bench dwarf 2>&1 | grep -v "^ *Compiling\|^ *Finished\|^ *Running" | tee -a target/bench/REPORT.md
else
    echo "DWARF bench skipped: no target/dbg-vmlinux/*.vmlinux (scripts/fetch-dbg-vmlinux.sh)"
fi
rm -rf "$FEVLINT_CACHE_DIR"
echo "report: target/bench/REPORT.md"
