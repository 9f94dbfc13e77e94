#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a stated time budget and records, per target,
# the wall time, the executions and the crashes (files libFuzzer wrote as artifacts), as a
# Markdown table (printed, and kept in target/fuzz-all/<stamp>/results.md with each log).
#
#   scripts/fuzz-all.sh [SECONDS_PER_TARGET] [TARGET...]      (default: 60, every target)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a Rust toolchain; the targets build
# with RUSTC_BOOTSTRAP=1 on stable, as README says. Built with `-O` (optimised, debug
# assertions on) and `-s none` (no sanitizer: the readers are safe Rust, and the
# executions per second matter more on two shared cores). Each target's corpus lives in
# fuzz/corpus/<target> and grows from run to run; fuzz/seeds/<target>, if present, seeds it.
# Exit status: 0 when no target crashed, 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
budget=${1:-60}
shift || true
cd "$root/fuzz"
command -v cargo-fuzz >/dev/null || { echo "fuzz-all: cargo-fuzz is missing: cargo install cargo-fuzz" >&2; exit 2; }
export RUSTC_BOOTSTRAP=1

if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

stamp=$(date -u +%Y%m%dT%H%M%SZ)
out="$root/target/fuzz-all/$stamp"
mkdir -p "$out"
echo "fuzz-all: building ${#targets[@]} targets" >&2
build_start=$(date +%s)
cargo fuzz build -O -s none >"$out/build.log" 2>&1 || { tail -30 "$out/build.log" >&2; exit 2; }
build_s=$(( $(date +%s) - build_start ))

{
    echo "Run $stamp on $(git -C "$root" rev-parse --short HEAD), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), budget ${budget} s per target, build ${build_s} s."
    echo
    echo "| target | time (s) | executions | exec/s | corpus | crashes |"
    echo "|---|---:|---:|---:|---:|---:|"
} >"$out/results.md"

crashed=0
for t in "${targets[@]}"; do
    corpus="corpus/$t"
    artifacts="$out/artifacts/$t"
    mkdir -p "$corpus" "$artifacts"
    seeds=()
    [ -d "seeds/$t" ] && seeds=("seeds/$t")
    echo "fuzz-all: $t (${budget} s)" >&2
    start=$(date +%s.%N)
    # libFuzzer's own exit status says "crashed"; the artifacts say what.
    cargo fuzz run -O -s none "$t" "$corpus" "${seeds[@]}" -- \
        -max_total_time="$budget" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" >"$out/$t.log" 2>&1 || true
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$out/$t.log" | tail -1)
    rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$out/$t.log" | tail -1)
    crashes=$(find "$artifacts" -type f | wc -l)
    files=$(find "$corpus" -type f | wc -l)
    [ "$crashes" -gt 0 ] && crashed=1
    printf '| `%s` | %.0f | %s | %s | %s | %s |\n' "$t" "$secs" "${execs:-?}" "${rate:-?}" "$files" "$crashes" >>"$out/results.md"
done
cat "$out/results.md"
echo "fuzz-all: logs and artifacts in $out" >&2
exit $crashed
