#!/usr/bin/env bash
# run-bpftrace.sh: boot a real kernel under QEMU with Debian's bpftrace (and every library
# it links) in the initramfs, run each bpftrace script of a folder in the guest, and
# report what bpftrace said and how it exited; also the kernel's trace event list
# (`available_events`: system:event per line).
#
# usage: run-bpftrace.sh [options] VMLINUZ|KERNEL.deb SCRIPTS_DIR
#   SCRIPTS_DIR: *.bt files, run one after the other as `bpftrace FILE` with a wall limit;
#                a script that attaches should end itself (an `interval:s:1 { exit(); }`
#                probe fires only once every probe is attached).
# options:
#   -m, --mem SIZE      guest RAM (default 2G: the initramfs holds LLVM and clang)
#   --per-script SECS   wall limit per script in the guest (default 120)
#   --timeout SECS      wall limit for the guest (default 1200)
#   --keep DIR          keep the console and result logs in DIR
#   --bpftrace-args A   extra arguments for every bpftrace run (e.g. `-v`)
# output (tab-separated rows on stdout):
#   KERNEL <uname -r>
#   EVENT  <system:event>           every line of available_events
#   RUN    <file> <exit status> <seconds>
#   OUT    <file> <line>            what bpftrace printed (stdout and stderr)
# exit: 0 done, 2 guest did not finish (see the console tail on stderr), 1 setup error.
set -euo pipefail

die() { echo "run-bpftrace: $*" >&2; exit 1; }
MEM=2G PER=120 TMO=1200 KEEP= BTARGS=
while [ $# -gt 0 ]; do
  case $1 in
    -m|--mem) MEM=$2; shift 2;;
    --per-script) PER=$2; shift 2;;
    --timeout) TMO=$2; shift 2;;
    --keep) KEEP=$2; shift 2;;
    --bpftrace-args) BTARGS=$2; shift 2;;
    -h|--help) sed -n '2,23p' "$0"; exit 0;;
    -*) die "unknown option $1";;
    *) break;;
  esac
done
[ $# -eq 2 ] || die "usage: $0 [options] VMLINUZ|KERNEL.deb SCRIPTS_DIR (see --help)"
KIN=$1 SCRIPTS=$2
[ -r "$KIN" ] || die "no kernel at $KIN"
[ -d "$SCRIPTS" ] || die "no scripts folder at $SCRIPTS"
command -v qemu-system-x86_64 >/dev/null || die "need qemu-system-x86_64 (apt-get install qemu-system-x86)"
BB=$(command -v busybox || true)
[ -n "$BB" ] && ! ldd "$BB" >/dev/null 2>&1 || die "need a static busybox (apt-get install busybox-static)"
BT=$(command -v bpftrace || true)
[ -n "$BT" ] || die "need bpftrace (apt-get install bpftrace)"
command -v cpio >/dev/null || die "need cpio"

W=$(mktemp -d /tmp/bt-oracle.XXXXXX)
QPID=
cleanup() {
  if [ -n "$QPID" ] && kill -0 "$QPID" 2>/dev/null; then kill "$QPID" 2>/dev/null || true; fi
  if [ -n "$KEEP" ]; then mkdir -p "$KEEP" && cp -f "$W"/console.log "$W"/result.log "$KEEP"/ 2>/dev/null || true; fi
  rm -rf "$W"
}
trap cleanup EXIT

case $KIN in
  *.deb)
    mkdir "$W/deb"
    dpkg-deb --fsys-tarfile "$KIN" | tar -x -C "$W/deb" --wildcards './boot/vmlinuz-*'
    VMLINUZ=$(ls "$W"/deb/boot/vmlinuz-* 2>/dev/null | head -1)
    [ -n "$VMLINUZ" ] || die "no /boot/vmlinuz-* in $KIN";;
  *) VMLINUZ=$KIN;;
esac

# --- initramfs: busybox, bpftrace, its libraries at their paths, clang's headers -------
R=$W/root
mkdir -p "$R"/{bin,dev,proc,sys,tmp,scripts,usr/bin}
cp "$BB" "$R/bin/busybox"
cp "$BT" "$R/usr/bin/bpftrace"
ldd "$BT" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | while read -r lib; do
  mkdir -p "$R$(dirname "$lib")"
  cp -L "$lib" "$R$lib"
done
for inc in /usr/lib/llvm-*/lib/clang/*/include; do
  [ -d "$inc" ] && { mkdir -p "$R$inc"; cp -r "$inc/." "$R$inc/"; }
done
cp "$SCRIPTS"/*.bt "$R/scripts/" 2>/dev/null || die "no *.bt in $SCRIPTS"
printf 'PER=%q\nBTARGS=%q\n' "$PER" "$BTARGS" > "$R/config"
cat > "$R/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin HOME=/tmp
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
. /config
exec 3>/dev/ttyS1
o() { printf '@@O %s\n' "$*" >&3; }
o KERNEL "$(uname -r)"
T=/sys/kernel/tracing; [ -e $T/available_events ] || T=/sys/kernel/debug/tracing
sed 's/^/@@O EVENT /' $T/available_events >&3
for f in /scripts/*.bt; do
  n=${f##*/}
  s=$(cut -d' ' -f1 /proc/uptime)
  timeout "$PER" bpftrace $BTARGS "$f" </dev/null >/tmp/out 2>&1
  rc=$?
  e=$(cut -d' ' -f1 /proc/uptime)
  o RUN "$n" "$rc" "$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.1f", b - a }')"
  sed "s|^|@@O OUT $n |" /tmp/out >&3
done
o END
poweroff -f
EOF
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.cpio.gz"

ACCEL=(-accel tcg)
if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && [ ! -d /sys/module/kvm_pvm ]; then
  ACCEL=(-accel kvm -cpu host)
fi
: > "$W/result.log"
timeout "$TMO" qemu-system-x86_64 "${ACCEL[@]}" -m "$MEM" -smp 1 -nodefaults -no-user-config \
  -display none -no-reboot -kernel "$VMLINUZ" -initrd "$W/initramfs.cpio.gz" \
  -append "console=ttyS0 quiet panic=-1 nokaslr" \
  -serial "file:$W/console.log" -serial "file:$W/result.log" > "$W/qemu.out" 2>&1 &
QPID=$!
wait "$QPID" || true
QPID=

tr -d '\r' < "$W/result.log" | awk '
/^@@O KERNEL / { print "KERNEL\t" substr($0, 12); next }
/^@@O EVENT / { print "EVENT\t" substr($0, 11); next }
/^@@O RUN / { print "RUN\t" $3 "\t" $4 "\t" $5; next }
/^@@O OUT / { x = $0; sub(/^@@O OUT [^ ]+ /, "", x); print "OUT\t" $3 "\t" x; next }
/^@@O END/ { done = 1 }
END { if (!done) exit 2 }' || {
  echo "run-bpftrace: the guest did not finish; console tail:" >&2
  tr -d '\r' < "$W/console.log" | tail -20 >&2
  cat "$W/qemu.out" >&2
  exit 2
}
