#!/usr/bin/env bash
# The compatibility matrix over every amd64 Debian kernel this machine's apt offers:
# fetches each (cached in $FEVLINT_CACHE_DIR, default target/matrix-cache), then one
# `fevlint matrix` over them all. Writes target/matrix.{txt,json,html}; prints the wall
# times with the machine, load and commit.
#
#   scripts/matrix-debian.sh [PATHS…]          # default: examples/
set -euo pipefail
cd "$(dirname "$0")/.."
export FEVLINT_CACHE_DIR=${FEVLINT_CACHE_DIR:-$PWD/target/matrix-cache}
PATHS=("${@:-examples/}")
cargo build --release -q -p fevlint
F=./target/release/fevlint
mapfile -t KERNELS < <($F kernel list debian | cut -f1 | grep -E -- '-amd64$')
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD)"
echo "${#KERNELS[@]} kernels"
t0=$(date +%s.%N)
ARGS=()
for k in "${KERNELS[@]}"; do
    if $F kernel fetch "$k" >/dev/null 2>target/matrix-fetch.err; then
        ARGS+=(-k "$k")
    else
        echo "not fetched: $k: $(cat target/matrix-fetch.err)"
    fi
done
t1=$(date +%s.%N)
echo "$(( ${#ARGS[@]} / 2 )) kernels fetched"
$F matrix "${ARGS[@]}" --format json -o target/matrix.json "${PATHS[@]}" || true
t2=$(date +%s.%N)
$F matrix "${ARGS[@]}" --format html -o target/matrix.html "${PATHS[@]}" || true
$F matrix "${ARGS[@]}" "${PATHS[@]}" > target/matrix.txt || true
tail -1 target/matrix.txt
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {printf "fetch (first run: download and decode) %.1f s; matrix over all of them %.1f s\n", b-a, c-b}'
