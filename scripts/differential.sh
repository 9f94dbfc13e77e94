#!/usr/bin/env bash
# Differential run: every output of two fevlint binaries over the examples and the
# fixture scripts, on every fixture kernel, in every format, compared byte for byte.
#
#   scripts/differential.sh BASELINE CANDIDATE [WORKDIR]
#
# BASELINE and CANDIDATE are fevlint binaries (e.g. a release build of main kept aside,
# and target/debug/fevlint). Each command's stdout, stderr and exit status are written
# under WORKDIR/{a,b}/ and compared; the script prints the differing files and exits 1
# when any differ, else prints how many outputs were compared and exits 0.
#
# Covered: `check` (human, json, sarif, github) of each script on each kernel and on
# no kernel; `emit` (kprobe, fprobe, auto) of each script on each kernel; `matrix`
# (human, json, html) over all kernels; `kernel info|fn|type|at`; `diff` (human, json)
# of kernel pairs; `lock` and `fix --dry-run`; `rule` (list and each rule); and, when
# gcc and gdb are present, `dry-run` (human, json) over a core of a small C program
# dumped by gdb's `gcore` (server/tests/dry_run/prog.c).
set -euo pipefail

A=$(realpath "$1")
B=$(realpath "$2")
WORK=${3:-$(mktemp -d)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

rm -rf "$WORK/a" "$WORK/b"
mkdir -p "$WORK/a" "$WORK/b" "$WORK/in"

KERNELS=(fixtures/kernels/*/SOURCE.md)
KERNELS=("${KERNELS[@]%/SOURCE.md}")
SCRIPTS=(examples/*.fev examples/*.dynevents fixtures/scripts/*.fev)

# A core for the dry run, made once and shared by both binaries.
CORE=
if command -v gcc >/dev/null && command -v gdb >/dev/null; then
    gcc -g -O1 -no-pie -o "$WORK/in/prog" server/tests/dry_run/prog.c
    gdb -q -batch -nx -ex 'set pagination off' -ex 'break *target_read' -ex run \
        -ex "gcore $WORK/in/core" "$WORK/in/prog" >/dev/null 2>&1 || true
    [ -s "$WORK/in/core" ] && CORE="$WORK/in/core"
    cat >"$WORK/in/user.fev" <<'EOF'
target_read(x64 file, x64 buf, u64 count, int whence)
target_read(x32 flags[0] | symbol read+8[0][0] | u64 ino+16[0][0] | int icount+16[0]+12[0] | char[16] name+24 | string path+40[0] | u32 mode+16[0]+8[0] | symbol write+8[0]+8[0] | x8[4] name4+24)
target_read(u64 missing+4096[0][0], NULL, u64 count)
EOF
fi

n=0
# run NAME ARGS...: runs both binaries with ARGS, each with its own fresh cache.
run() {
    local name=$1
    shift
    for side in a b; do
        local bin=$A
        [ "$side" = b ] && bin=$B
        local out="$WORK/$side/$name"
        set +e
        FEVLINT_CACHE_DIR="$WORK/cache-$side" NO_COLOR=1 "$bin" "$@" >"$out.out" 2>"$out.err" </dev/null
        echo $? >"$out.rc"
        set -e
        # A file the command wrote (a lock) is an output too.
        if [ -e "$WORK/lock" ]; then mv "$WORK/lock" "$out.lock"; fi
    done
    n=$((n + 1))
}

slug() { echo "$1" | tr '/+ ' '___'; }

for s in "${SCRIPTS[@]}"; do
    for fmt in human json sarif github; do
        run "check-nokernel-$(slug "$s")-$fmt" check --color never --format "$fmt" "$s"
    done
done
for k in "${KERNELS[@]}"; do
    ks=$(slug "$(basename "$k")")
    for fmt in human json; do
        run "kernel-info-$ks-$fmt" kernel info --format "$fmt" "$k"
        run "kernel-fn-$ks-$fmt" kernel fn --format "$fmt" "$k" vfs_read
        run "kernel-type-$ks-$fmt" kernel type --format "$fmt" "$k" 'struct file'
        run "kernel-at-$ks-$fmt" kernel at --format "$fmt" "$k" 'struct file' 40
    done
    for s in "${SCRIPTS[@]}"; do
        ss=$(slug "$s")
        for fmt in human json sarif github; do
            run "check-$ks-$ss-$fmt" check --color never --format "$fmt" -k "$k" "$s"
        done
        for fl in kprobe fprobe auto; do
            run "emit-$ks-$ss-$fl" emit --kernel "$k" --flavor "$fl" "$s"
        done
    done
    run "check-$ks-all-json" check --color never --format json -k "$k" examples fixtures/scripts
    run "lock-$ks" lock -k "$k" -o "$WORK/lock" examples
done
# Several kernels at once.
kargs=()
for k in "${KERNELS[@]}"; do kargs+=(-k "$k"); done
for fmt in human json sarif github; do
    run "check-allkernels-$fmt" check --color never --format "$fmt" "${kargs[@]}" examples fixtures/scripts
done
for fmt in human json html; do
    run "matrix-$fmt" matrix --format "$fmt" "${kargs[@]}" examples fixtures/scripts
done
# Kernel pairs: diff, and fix --dry-run from the old kernel to the new one.
for i in "${!KERNELS[@]}"; do
    for j in "${!KERNELS[@]}"; do
        [ "$i" -lt "$j" ] || continue
        old=${KERNELS[$i]}
        new=${KERNELS[$j]}
        p="$(slug "$(basename "$old")")-$(slug "$(basename "$new")")"
        for fmt in human json; do
            run "diff-$p-$fmt" diff --format "$fmt" "$old" "$new"
        done
        run "diff-$p-fn" diff --function vfs_read --type 'struct file' "$old" "$new"
        run "fix-$p" fix --dry-run -k "$old" -k "$new" examples fixtures/scripts
    done
done
run rule-list rule
for code in $("$A" rule | awk '/^[A-Z][0-9]{3}/ {print $1}'); do
    run "rule-$code" rule "$code"
done
if [ -n "$CORE" ]; then
    for fmt in human json; do
        run "dryrun-$fmt" dry-run --kernel "$WORK/in/prog" --core "$CORE" --format "$fmt" "$WORK/in/user.fev"
        run "dryrun-$fmt-fmt" dry-run --kernel "$WORK/in/prog" --core "$CORE" --show-format --format "$fmt" "$WORK/in/user.fev"
    done
    run "dryrun-arg" dry-run --kernel "$WORK/in/prog" --core "$CORE" --arg slot3=5 "$WORK/in/user.fev"
else
    echo "differential: no gcc/gdb, dry run not compared" >&2
fi

if diff -r "$WORK/a" "$WORK/b" >"$WORK/diff.txt"; then
    echo "differential: $n commands, $(ls "$WORK/a" | wc -l) outputs, all identical ($WORK)"
else
    echo "differential: outputs differ ($WORK/diff.txt):"
    grep -E '^(diff|Only)' "$WORK/diff.txt" | head -50
    exit 1
fi
