#!/usr/bin/env bash
# run-bpf-load.sh: boot a real kernel under QEMU and run a static BPF loader on objects in
# the guest (server/tests/bpf_kernel.rs). The loader (server/tests/bpf/loader.c) prints one
# PROG line per program: load and attach results and libbpf's warnings; then Debian's
# bpftool loads each object whole (`bpftool prog loadall`: a LOADALL line, 0 loaded, 1
# refused with its words). This prints the
# guest's output lines (those of ttyS1) on stdout, after the error-injection list's
# (`EIL\tLINE`, or `EIL-ABSENT`).
#
# usage: run-bpf-load.sh VMLINUZ|KERNEL.deb DIR
#   DIR: holds `loader` (static) and the objects (*.o) it is run on, in name order; and
#   config-RELEASE files, copied to the guest's /boot (libbpf reads __kconfig there).
# exit: 0 done, 2 the guest did not finish (its console on stderr), 1 usage/setup error.
set -euo pipefail
die() { echo "run-bpf-load: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: $0 VMLINUZ|KERNEL.deb DIR"
KIN=$1 DIR=$2
command -v qemu-system-x86_64 >/dev/null || die "need qemu-system-x86_64 (apt-get install qemu-system-x86)"
BB=$(command -v busybox || true)
[ -n "$BB" ] && ! ldd "$BB" >/dev/null 2>&1 || die "need a static busybox (apt-get install busybox-static)"
command -v cpio >/dev/null || die "need cpio"
[ -x "$DIR/loader" ] || die "no loader in $DIR"
W=$(mktemp -d /tmp/bpfload.XXXXXX)
trap 'rm -rf "$W"' EXIT
case $KIN in
  *.deb)
    mkdir "$W/deb"
    dpkg-deb --fsys-tarfile "$KIN" | tar -x -C "$W/deb" --wildcards './boot/vmlinuz-*'
    VMLINUZ=$(ls "$W"/deb/boot/vmlinuz-* | head -1);;
  *) VMLINUZ=$KIN;;
esac
R=$W/root
mkdir -p "$R"/{bin,dev,proc,sys,tmp,objs}
cp "$BB" "$R/bin/busybox"
cp "$DIR/loader" "$R/bin/loader"
# Debian's bpftool (dynamically linked: its libraries and loader beside it) for
# `bpftool prog loadall` of each object (LOADALL lines).
BPFTOOL=$(command -v bpftool || true)
[ -n "$BPFTOOL" ] || die "need bpftool"
cp "$BPFTOOL" "$R/bin/bpftool"
for lib in $(ldd "$BPFTOOL" | grep -o '/[^ ]*'); do
  mkdir -p "$R$(dirname "$lib")"; cp -L "$lib" "$R$lib"
done
cp "$DIR"/*.o "$R/objs/"
# The kernels' configs (DIR/config-RELEASE), where a Debian system has them: /boot.
mkdir -p "$R/boot"
for c in "$DIR"/config-*; do [ -e "$c" ] && cp "$c" "$R/boot/"; done
cat > "$R/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
exec 3>/dev/ttyS1
echo "BEGIN $(uname -r)" >&3
# The error-injection list fmod_ret needs (absent on a kernel built without it).
[ -d /sys/kernel/debug/kprobes ] && echo DEBUGFS >&3
if [ -e /sys/kernel/debug/error_injection/list ]; then sed 's/^/EIL\t/' /sys/kernel/debug/error_injection/list >&3
else echo EIL-ABSENT >&3; fi
cd /objs && /bin/loader *.o >&3 2>&1
# Each object whole, as `bpftool prog loadall` loads it (every program, none attached).
for o in *.o; do
  if bpftool prog loadall "$o" /sys/fs/bpf/la >/tmp/la.log 2>&1; then printf 'LOADALL\t%s\t0\n' "$o" >&3
  else printf 'LOADALL\t%s\t1\t%s\n' "$o" "$(tr '\n\t' '  ' </tmp/la.log | cut -c1-400)" >&3; fi
  rm -rf /sys/fs/bpf/la
done
echo END >&3
poweroff -f
INIT
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.cpio.gz"
ACC=(-accel tcg)
if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then ACC=(-accel kvm -cpu host); fi
: > "$W/result.log"
timeout 600 qemu-system-x86_64 "${ACC[@]}" -m 512M -smp 1 -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$VMLINUZ" -initrd "$W/initramfs.cpio.gz" -append "console=ttyS0 quiet panic=-1 nokaslr" \
  -serial "file:$W/console.log" -serial "file:$W/result.log" >/dev/null 2>&1 || true
cat "$W/result.log"
grep -q '^END' "$W/result.log" || { tail -40 "$W/console.log" >&2; exit 2; }
