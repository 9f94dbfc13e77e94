#!/usr/bin/env bash
# The dry run against drgn, interleaved in one run, on the same real dump: Debian 6.12
# under QEMU stopped by its gdb stub at the entry of `do_sys_openat2` (written by
# `FEVLINT_REAL_TOOLS=1 cargo test -p fevlint-memory --test kernel_dumps`), read with the fixture's kernel
# folder (fevlint) and the same kernel's `-dbg` vmlinux (drgn, which needs DWARF).
#
#   scripts/bench-dry-run.sh [ROUNDS]      # default 11 interleaved rounds
#
# Prints, with the machine, load and commit:
#  - whole process, median of ROUNDS: `fevlint dry-run` of the definition below against
#    a Python process that opens the dump with drgn (`set_core_dump`, `load_debug_info`)
#    and reads the same fields through drgn's objects;
#  - in process: field evaluations per second, fevlint-exec's `evaluate` (the eval bench)
#    against drgn's object API from Python.
# Both read the same values, or the script fails: drgn is an independent reader of the
# same dump (it reads the user-space path through the task's mm, fevlint through CR3).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-11}
DUMP=target/tmp/kernel_dumps/nokaslr/gdbstop.core
KERNEL=fixtures/kernels/6.12.117+deb12-amd64
VENV=target/bench-venv

[ -s "$DUMP" ] || FEVLINT_REAL_TOOLS=1 cargo test --release -p fevlint-memory --test kernel_dumps >&2
VMLINUX=$(FEVLINT_DBG_PACKAGE=linux-image-6.12.117+deb12-amd64-dbg scripts/fetch-dbg-vmlinux.sh | tail -1)
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import drgn' 2>/dev/null || "$VENV/bin/pip" install -q drgn >&2
cargo build --release -q -p fevlint
cargo build --release -q -p fevlint-exec --bench eval 2>/dev/null || true

SCRIPT=$(mktemp --suffix=.fev)
DRGN=$(mktemp --suffix=.py)
trap 'rm -f "$SCRIPT" "$DRGN"' EXIT
echo 'do_sys_openat2(int dfd, string path, x64 flags[0] | u64 mode+8[0] | u64 resolve+16[0])' >"$SCRIPT"
cat >"$DRGN" <<'EOF'
import sys, time
import drgn
from drgn.helpers.linux.sched import cpu_curr
from drgn.helpers.linux.mm import access_remote_vm
prog = drgn.Program()
prog.set_core_dump(sys.argv[1])
prog.load_debug_info([sys.argv[2]])
task = cpu_curr(prog, 0)
regs = prog.stack_trace(task)[0].registers()
def fields():
    how = drgn.Object(prog, "struct open_how *", value=regs["rdx"])
    return (drgn.Object(prog, "int", value=regs["rdi"] & 0xffffffff).value_(),
            how.flags.value_(), how.mode.value_(), how.resolve.value_())
dfd, flags, mode, resolve = fields()
def user_string(addr, limit=512):
    out = b""
    while len(out) < limit:  # page by page: the string may end just before an unmapped page
        n = min(4096 - (addr + len(out)) % 4096, limit - len(out))
        chunk = access_remote_vm(task.mm, addr + len(out), n)
        if b"\0" in chunk:
            return out + chunk.split(b"\0")[0]
        out += chunk
    return out
path = user_string(regs["rsi"]).decode()
print(f"dfd={dfd}, path={path}, flags={flags:x}, mode={mode}, resolve={resolve}")
if len(sys.argv) > 3:
    n = int(sys.argv[3])
    start = time.perf_counter()
    for _ in range(n):
        fields()
    print(f"rate {4 * n / (time.perf_counter() - start):.0f}")
EOF

ms() { local s e; s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(((e - s) / 1000)); }
median() { sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%.1f", m/1000}'; }

ours=$(./target/release/fevlint dry-run --kernel "$KERNEL" --core "$DUMP" "$SCRIPT")
theirs=$("$VENV/bin/python" "$DRGN" "$DUMP" "$VMLINUX")
echo "fevlint: $ours"
echo "drgn:    $theirs"
[ "${ours#*(}" = "$theirs)" ] || { echo "error: fevlint and drgn read different values" >&2; exit 1; }

F=() D=()
for _ in $(seq "$ROUNDS"); do
    F+=("$(ms ./target/release/fevlint dry-run --kernel "$KERNEL" --core "$DUMP" "$SCRIPT")")
    D+=("$(ms "$VENV/bin/python" "$DRGN" "$DUMP" "$VMLINUX")")
done
f=$(printf '%s\n' "${F[@]}" | median)
d=$(printf '%s\n' "${D[@]}" | median)
eval_rate=$(cargo bench -q -p fevlint-exec --bench eval 2>/dev/null | sed -n 's#.*: \([0-9.]* M field evaluations/s\).*#\1#p' | tail -1)
drgn_rate=$("$VENV/bin/python" "$DRGN" "$DUMP" "$VMLINUX" 20000 | awk '/^rate/ {print $2}')

echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD)$(git diff --quiet || echo '+dirty')"
echo "dump: $DUMP ($(du -h "$DUMP" | cut -f1)), drgn $("$VENV/bin/python" -c 'import drgn; print(drgn.__version__)'), vmlinux $(du -h "$VMLINUX" | cut -f1)"
echo "whole process, median of $ROUNDS: fevlint dry-run ${f} ms, drgn ${d} ms, ratio $(awk -v a="$f" -v b="$d" 'BEGIN {printf "%.3f", a/b}')"
echo "in process: fevlint-exec ${eval_rate:-?}; drgn objects from Python: ${drgn_rate} field evaluations/s"
