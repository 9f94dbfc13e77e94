#!/usr/bin/env bash
# run-oracle.sh: boot a real kernel under QEMU, write probe definitions into
# tracefs (dynamic_events, else kprobe_events), report what the kernel accepted
# or rejected (with its error_log), run a trigger workload, print the trace,
# and optionally dump guest memory to an ELF vmcore.
#
# Minimal copy of /work/shared/tools/qemu-oracle/run-oracle.sh for the fevlint-memory
# dump tests; the changes are --dump-also (several dump formats in one pause, the vCPUs
# stopped first) and --gdb-stop (a dump at one call's entry through QEMU's gdb stub). A
# richer harness lives on the `oracle` branch.
#
# usage: run-oracle.sh [options] VMLINUZ|KERNEL.deb DEFS_FILE
#   DEFS_FILE: one definition per line, written verbatim and one at a time
#              (blank lines and lines starting with '#' are skipped; '-:ev'
#              removal lines are passed through like any other line).
# options:
#   -t, --trigger CMDS  shell commands run in the guest while events are on
#                       (default: 'cat /proc/version; ls /; head -c 64 /init >/dev/null')
#   --all-pids          record every task (default: only the trigger's process
#                       tree, via set_event_pid + options/event-fork)
#   --dump FILE         after the trace, pause the guest and write a plain ELF
#                       vmcore (QMP dump-guest-memory, paging=false) to FILE
#   --dump-paging       dump with paging=true (virtual addresses in PT_LOAD)
#   --gdb-stop ADDR COND FILE  stop the guest through QEMU's gdb stub at the first
#                       instruction at ADDR where the gdb expression COND holds, write
#                       a plain ELF dump of that moment to FILE (and gdb's registers
#                       to FILE.regs), then let the guest go on (needs --dump and gdb)
#   --dump-also FMT:FILE  (repeatable) in the same pause, also dump in QMP format FMT
#                       (elf, elf-paging, kdump-zlib, kdump-lzo, kdump-snappy) to FILE
#   --fwcfg-ko FILE     qemu_fw_cfg.ko[.xz|.zst] for the VMCOREINFO note
#                       (default: looked up next to VMLINUZ / in the .deb /
#                       in /lib/modules/VER; "none" to skip it)
#   --accel kvm|tcg     (default: kvm if /dev/kvm is usable and the CPU shows
#                       vmx/svm and no kvm_pvm module; else tcg)
#   --cpu MODEL         QEMU -cpu model (default: host with kvm, qemu64 with tcg)
#   --kaslr             keep KASLR (default: boot with nokaslr)
#   --qemu BIN          the QEMU system emulator (default qemu-system-x86_64;
#                       qemu-system-i386 for a 32-bit kernel, whose gdb stub is i386)
#   --prelude FILE      shell sourced in the guest before the definitions are written
#                       (with T=tracefs; it may rewrite /defs, e.g. to keep the
#                       definitions of functions a first workload called)
#   --extra DIR         copy DIR into the initramfs as /extra (files a prelude reads)
#   --trace-awk FILE    print the trace through this awk program (e.g. to keep the first
#                       lines of each event of a large trace)
#   --busybox BIN       a static busybox for the guest (default: the host's; an i386
#                       kernel without IA32 emulation of x86_64 needs an i386 one)
#   -m, --mem SIZE      guest RAM (default 512M)
#   --append ARGS       extra kernel command line
#   --timeout SECS      wall limit for the guest (default 300)
#   --tsv               machine format: DEF/KMSG/EVENT/TRACE rows, tab-separated
#   --raw               print trace header lines ('#') too
#   --keep DIR          keep initramfs, console and result logs in DIR
#   --quick             verdicts only: no dmesg per line, no events enabled (the
#                       trigger still runs; its output is in DIR/result.log with --keep)
# exit: 0 done, 2 guest did not finish (see console log), 1 usage/setup error.
set -euo pipefail

die() { echo "run-oracle: $*" >&2; exit 1; }
TRIGGER='cat /proc/version; ls /; head -c 64 /init >/dev/null'
ALLPIDS=0 DUMP= DUMP_ALSO=() GSTOP= GCOND= GFILE= PAGING=false FWKO= ACCEL= CPU= KASLR=0 MEM=512M APPEND= TMO=300
TSV=0 RAW=0 KEEP= QEMU=qemu-system-x86_64 BB= QUICK=0 PRELUDE= TRACE_AWK= EXTRA=
while [ $# -gt 0 ]; do
  case $1 in
    -t|--trigger) TRIGGER=$2; shift 2;;
    --all-pids) ALLPIDS=1; shift;;
    --dump) DUMP=$2; shift 2;;
    --dump-paging) PAGING=true; shift;;
    --dump-also) DUMP_ALSO+=("$2"); shift 2;;
    --gdb-stop) GSTOP=$2 GCOND=$3 GFILE=$(realpath -m "$4"); shift 4;;
    --fwcfg-ko) FWKO=$2; shift 2;;
    --accel) ACCEL=$2; shift 2;;
    --cpu) CPU=$2; shift 2;;
    --kaslr) KASLR=1; shift;;
    --qemu) QEMU=$2; shift 2;;
    --busybox) BB=$2; shift 2;;
    --prelude) PRELUDE=$2; shift 2;;
    --trace-awk) TRACE_AWK=$2; shift 2;;
    --extra) EXTRA=$2; shift 2;;
    -m|--mem) MEM=$2; shift 2;;
    --append) APPEND=$2; shift 2;;
    --timeout) TMO=$2; shift 2;;
    --tsv) TSV=1; shift;;
    --raw) RAW=1; shift;;
    --keep) KEEP=$2; shift 2;;
    --quick) QUICK=1; shift;;
    -h|--help) sed -n '2,55p' "$0"; exit 0;;
    --) shift; break;;
    -*) die "unknown option $1";;
    *) break;;
  esac
done
[ $# -eq 2 ] || die "usage: $0 [options] VMLINUZ|KERNEL.deb DEFS_FILE (see --help)"
KIN=$1 DEFS=$2
[ -r "$KIN" ] || die "no kernel at $KIN"
[ -r "$DEFS" ] || die "no definitions file at $DEFS"
command -v "$QEMU" >/dev/null || die "need $QEMU (apt-get install qemu-system-x86)"
[ -n "$BB" ] || BB=$(command -v busybox || true)
[ -n "$BB" ] && ! ldd "$BB" >/dev/null 2>&1 || die "need a static busybox (apt-get install busybox-static)"
command -v cpio >/dev/null || die "need cpio"
[ -z "$DUMP" ] || command -v socat >/dev/null || die "--dump needs socat"

# A dump is about the guest's RAM per file: refuse to start without room for all of them,
# rather than let a full disk stop QEMU's writes and the guest time out.
mem_mb() {
  case $1 in
    *[Gg]) echo $(( ${1%[Gg]} * 1024 ));;
    *[Mm]) echo "${1%[Mm]}";;
    *) echo $(( $1 / 1048576 ));;
  esac
}
free_mb() { df -Pm "$1" 2>/dev/null | awk 'NR == 2 { print $4 }'; }
if [ -n "$DUMP" ]; then
  ndumps=$(( 1 + ${#DUMP_ALSO[@]} ))
  [ -z "$GSTOP" ] || ndumps=$(( ndumps + 2 ))   # the stop's ELF and kdump files
  want=$(( $(mem_mb "$MEM") * ndumps + 64 ))
  for f in "$DUMP" ${GFILE:+"$GFILE"} "${DUMP_ALSO[@]#*:}"; do
    d=$(dirname "$(realpath -m "$f")")
    have=$(free_mb "$d")
    [ -z "$have" ] || [ "$have" -ge "$want" ] ||
      die "only ${have} MB free in $d; the dumps of a ${MEM} guest need about ${want} MB"
  done
fi

W=$(mktemp -d /tmp/oracle.XXXXXX)
QPID=
cleanup() {
  if [ -n "$QPID" ] && kill -0 "$QPID" 2>/dev/null; then kill "$QPID" 2>/dev/null || true; fi
  if [ -n "$KEEP" ]; then mkdir -p "$KEEP" && cp -f "$W"/console.log "$W"/result.log "$W"/initramfs.cpio.gz "$KEEP"/ 2>/dev/null || true; fi
  rm -rf "$W"
}
trap cleanup EXIT
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.2f", b-a}'; }

# --- kernel (and qemu_fw_cfg.ko) ---------------------------------------------
KVER=
case $KIN in
  *.deb)
    mkdir "$W/deb"
    dpkg-deb --fsys-tarfile "$KIN" | tar -x -C "$W/deb" --wildcards './boot/vmlinuz-*' '*/qemu_fw_cfg.ko*' 2>/dev/null || true
    VMLINUZ=$(ls "$W"/deb/boot/vmlinuz-* 2>/dev/null | head -1)
    [ -n "$VMLINUZ" ] || die "no /boot/vmlinuz-* in $KIN"
    [ -n "$FWKO" ] || FWKO=$(find "$W/deb" -name 'qemu_fw_cfg.ko*' | head -1);;
  *) VMLINUZ=$KIN;;
esac
KVER=$(basename "$VMLINUZ"); KVER=${KVER#vmlinuz-}
if [ -z "$FWKO" ]; then
  for d in "$(dirname "$VMLINUZ")/../lib/modules/$KVER" "/lib/modules/$KVER"; do
    f=$(ls "$d"/kernel/drivers/firmware/qemu_fw_cfg.ko* 2>/dev/null | head -1 || true)
    [ -n "$f" ] && { FWKO=$f; break; }
  done
fi

# --- initramfs -----------------------------------------------------------------
t0=$(now)
R=$W/root
mkdir -p "$R"/{bin,dev,proc,sys,tmp}
cp "$BB" "$R/bin/busybox"
cp "$DEFS" "$R/defs"
printf '%s\n' "$TRIGGER" > "$R/trigger"
if [ -n "$PRELUDE" ]; then cp "$PRELUDE" "$R/prelude"; else : > "$R/prelude"; fi
[ -z "$EXTRA" ] || cp -r "$EXTRA" "$R/extra"
if [ -n "$TRACE_AWK" ]; then cp "$TRACE_AWK" "$R/trace.awk"; else echo '{ print }' > "$R/trace.awk"; fi
[ "$FWKO" != none ] || FWKO=
[ -z "$DUMP" ] || [ -n "$FWKO" ] || echo "run-oracle: no qemu_fw_cfg.ko found (--fwcfg-ko): the dump will lack the VMCOREINFO note" >&2
if [ -n "$FWKO" ] && [ -n "$DUMP" ]; then
  case $FWKO in
    *.xz) xz -dc "$FWKO" > "$R/qemu_fw_cfg.ko";;
    *.zst) zstd -qdc "$FWKO" > "$R/qemu_fw_cfg.ko";;
    *.gz) gzip -dc "$FWKO" > "$R/qemu_fw_cfg.ko";;
    *) cp "$FWKO" "$R/qemu_fw_cfg.ko";;
  esac
fi
echo "ALLPIDS=$ALLPIDS DUMP=${DUMP:+1} QUICK=$QUICK" > "$R/config"
cat > "$R/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
. /config
exec 3>/dev/ttyS1
o() { echo "@@O $*" >&3; }
T=/sys/kernel/tracing
mount -t tracefs tracefs $T 2>/dev/null || { mount -t debugfs debugfs /sys/kernel/debug; T=/sys/kernel/debug/tracing; }
o BEGIN "$(uname -r)"
if [ -f /qemu_fw_cfg.ko ]; then
  if insmod /qemu_fw_cfg.ko 2>/tmp/e; then o FWCFG ok; else o FWCFG "fail $(cat /tmp/e)"; fi
fi
EV=$T/dynamic_events; [ -e $EV ] || EV=$T/kprobe_events
[ -e $EV ] || { o FATAL "no dynamic_events/kprobe_events in $T"; o END; poweroff -f; }
o FILE "${EV##*/}"
echo 0 > $T/tracing_on
. /prelude
echo > $T/error_log
dmesg -c >/dev/null 2>&1
n=0
while IFS= read -r line || [ -n "$line" ]; do
  n=$((n+1))
  case $line in ''|'#'*) continue;; esac
  case $line in
    -[neE]|-[neE][neE]|-[neE][neE][neE]) printf '%s\n' "$line" >> $EV 2>/tmp/e;;
    *) echo "$line" >> $EV 2>/tmp/e;;
  esac
  if [ $? = 0 ]; then o DEF $n ACCEPT; else o DEF $n REJECT; sed "s/^/@@O ERRNO $n /" /tmp/e >&3; fi
  cat $T/error_log > /tmp/l
  if [ -s /tmp/l ]; then sed "s/^/@@O LOG $n /" /tmp/l >&3; echo > $T/error_log; fi
  [ "$QUICK" = 1 ] && continue
  dmesg -c 2>/dev/null | grep -vE 'clocksource|tsc: |random: ' > /tmp/k; [ -s /tmp/k ] && sed "s/^/@@O KMSG $n /" /tmp/k >&3
done < /defs
cat $EV > /tmp/evs
sed 's/^/@@O REG /' /tmp/evs >&3
[ "$QUICK" = 1 ] && : > /tmp/evs
while read -r d rest; do
  ge=${d#*:}
  case $ge in */*) ;; *) ge=kprobes/$ge;; esac
  if echo 1 > $T/events/$ge/enable 2>/tmp/e; then o ENABLED "$ge"; else o ENABLEFAIL "$ge $(cat /tmp/e)"; fi
done < /tmp/evs
echo > $T/trace
if [ "$ALLPIDS" = 1 ]; then
  sh -c "TRIG=\$(cat /trigger); echo 1 > $T/tracing_on; exec sh -c \"\$TRIG\"" </dev/null >/tmp/trig.out 2>&1
else
  echo 1 > $T/options/event-fork 2>/dev/null
  sh -c "TRIG=\$(cat /trigger); echo \$\$ > $T/set_event_pid; echo 1 > $T/tracing_on; exec sh -c \"\$TRIG\"" </dev/null >/tmp/trig.out 2>&1
fi
rc=$?
echo 0 > $T/tracing_on
o TRIGGER_RC $rc
sed 's/^/@@O TOUT /' /tmp/trig.out >&3
o TRACE_BEGIN
awk -f /trace.awk $T/trace >&3
o TRACE_END
if [ "$DUMP" = 1 ]; then o PAUSE; sleep 100000; fi
o END
poweroff -f
EOF
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.cpio.gz"
T_INITRD=$(el "$t0")

# --- accelerator ----------------------------------------------------------------
if [ -z "$ACCEL" ]; then
  ACCEL=tcg
  if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && [ ! -d /sys/module/kvm_pvm ]; then ACCEL=kvm; fi
fi
case $ACCEL in
  kvm) QACC=(-accel kvm -cpu "${CPU:-host}");;
  tcg) QACC=(-accel tcg); [ -z "$CPU" ] || QACC+=(-cpu "$CPU");;
  *) die "--accel must be kvm or tcg";;
esac

# --- boot -------------------------------------------------------------------------
CMDLINE="console=ttyS0 quiet panic=-1"
[ "$KASLR" = 1 ] || CMDLINE="$CMDLINE nokaslr"
[ -z "$APPEND" ] || CMDLINE="$CMDLINE $APPEND"
: > "$W/result.log"
Q=("$QEMU" "${QACC[@]}" -m "$MEM" -smp 1 -nodefaults -no-user-config
   -display none -no-reboot -kernel "$VMLINUZ" -initrd "$W/initramfs.cpio.gz"
   -append "$CMDLINE" -serial "file:$W/console.log" -serial "file:$W/result.log")
[ -z "$DUMP" ] || Q+=(-device vmcoreinfo -qmp "unix:$W/qmp.sock,server=on,wait=off")
if [ -n "$GSTOP" ]; then
  [ -n "$DUMP" ] || die "--gdb-stop needs --dump (for the QMP socket)"
  command -v gdb >/dev/null || die "--gdb-stop needs gdb"
  Q+=(-gdb "unix:$W/gdb.sock,server=on,wait=off" -S)
  GDBARCH=i386:x86-64
  case $QEMU in *i386) GDBARCH=i386;; esac
  rm -f "$GFILE" "$GFILE.regs" "$GFILE.kdump"
  # Run from gdb at the stop: one QMP session that dumps the (stopped) guest.
  cat > "$W/gdbdump.sh" <<EOS
#!/usr/bin/env python3
import json, socket
s = socket.socket(socket.AF_UNIX); s.connect("$W/qmp.sock"); f = s.makefile("rw")
def call(cmd, **args):
    f.write(json.dumps({"execute": cmd, "arguments": args}) + "\\n"); f.flush()
    for line in f:
        r = json.loads(line)
        if "return" in r or "error" in r:
            return r
f.readline()
call("qmp_capabilities")
print("gdb-stop dump:", call("dump-guest-memory", paging=False, protocol="file:$GFILE"))
# The same stop in QEMU's kdump-compressed format (flattened, zlib pages).
print("gdb-stop kdump:", call("dump-guest-memory", paging=False, protocol="file:$GFILE.kdump", format="kdump-zlib"))
EOS
  chmod +x "$W/gdbdump.sh"
fi
t1=$(now)
timeout "$TMO" "${Q[@]}" > "$W/qemu.out" 2>&1 &
QPID=$!
if [ -n "$GSTOP" ]; then
  while [ ! -S "$W/gdb.sock" ] && kill -0 "$QPID" 2>/dev/null; do sleep 0.05; done
  timeout "$TMO" gdb -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
    -ex "set architecture $GDBARCH" -ex "target remote $W/gdb.sock" \
    -ex "break *$GSTOP if $GCOND" -ex 'continue' \
    -ex "pipe info registers | cat > $GFILE.regs" -ex "shell $W/gdbdump.sh" \
    -ex 'delete' -ex 'detach' > "$W/gdb.out" 2>&1 &
fi
T_DUMP=
if [ -n "$DUMP" ]; then
  while kill -0 "$QPID" 2>/dev/null && ! grep -q '^@@O PAUSE' "$W/result.log"; do sleep 0.2; done
  if grep -q '^@@O PAUSE' "$W/result.log"; then
    t2=$(now)
    DUMPABS=$(realpath -m "$DUMP"); rm -f "$DUMPABS"
    coproc QMP { socat - "UNIX-CONNECT:$W/qmp.sock"; }
    qin=${QMP[1]} qout=${QMP[0]}
    read -r -t 10 _ <&"$qout" || true
    echo '{"execute":"qmp_capabilities"}' >&"$qin"; read -r -t 10 _ <&"$qout" || true
    # Stop the vCPUs first: each dump-guest-memory resumes the guest when it ends, and
    # the dumps of one pause must hold the same memory.
    echo '{"execute":"stop"}' >&"$qin"
    while read -r -t 10 l <&"$qout"; do case $l in *'"return"'*|*'"error"'*) break;; esac; done
    echo "{\"execute\":\"dump-guest-memory\",\"arguments\":{\"paging\":$PAGING,\"protocol\":\"file:$DUMPABS\"}}" >&"$qin"
    dres=
    while read -r -t "$TMO" l <&"$qout"; do
      case $l in *'"return"'*) dres=ok; break;; *'"error"'*) dres=$l; break;; esac
    done
    for extra in "${DUMP_ALSO[@]}"; do
      efmt=${extra%%:*} efile=$(realpath -m "${extra#*:}"); rm -f "$efile"
      case $efmt in
        elf) eargs='"paging":false';;
        elf-paging) eargs='"paging":true';;
        *) eargs="\"paging\":false,\"format\":\"$efmt\"";;
      esac
      echo "{\"execute\":\"dump-guest-memory\",\"arguments\":{$eargs,\"protocol\":\"file:$efile\"}}" >&"$qin"
      eres=
      while read -r -t "$TMO" l <&"$qout"; do
        case $l in *'"return"'*) eres=ok; break;; *'"error"'*) eres=$l; break;; esac
      done
      [ "$eres" = ok ] || echo "run-oracle: dump $efmt failed: ${eres:-no reply}" >&2
    done
    T_DUMP=$(el "$t2")
    echo '{"execute":"quit"}' >&"$qin" || true
    wait "$QMP_PID" 2>/dev/null || true
    [ "$dres" = ok ] || echo "run-oracle: dump failed: ${dres:-no reply}" >&2
  fi
fi
wait "$QPID" || true
QPID=
T_BOOT=$(el "$t1")

# --- report ----------------------------------------------------------------------
tr -d '\r' < "$W/result.log" > "$W/r"
awk -v defs="$DEFS" -v tsv="$TSV" -v raw="$RAW" -v accel="$ACCEL" \
    -v tinit="$T_INITRD" -v tboot="$T_BOOT" -v tdump="$T_DUMP" -v dump="$DUMP" '
BEGIN {
  while ((getline l < defs) > 0) D[++nd] = l
  n = split("EINVAL=Invalid argument|ENOENT=No such file or directory|EEXIST=File exists|EBUSY=Device or resource busy|EILSEQ=Invalid or incomplete multibyte or wide character|E2BIG=Argument list too long|ENOMEM=Cannot allocate memory|ERANGE=Numerical result out of range|EFAULT=Bad address|EPERM=Operation not permitted|ENOSYS=Function not implemented|EOPNOTSUPP=Operation not supported|ENOSPC=No space left on device|ENODEV=No such device|EACCES=Permission denied|EADDRNOTAVAIL=Cannot assign requested address", a, "|")
  for (i = 1; i <= n; i++) { split(a[i], kv, "="); ERRN[kv[2]] = kv[1] }
}
function flush(  m, msg, pos, cmdoff) {
  if (cur == "") return
  msg = ""; pos = ""
  for (m = 1; m <= nl[cur]; m++) {
    x = L[cur, m]
    if (msg == "" && match(x, /^\[ *[0-9.]+\] /)) msg = substr(x, RLENGTH + 1)
    if (index(x, "Command: ")) cmdoff = index(x, "Command: ") + 8
    if (x ~ /^ *\^ *$/ && cmdoff) pos = index(x, "^") - 1 - cmdoff
  }
  if (msg == "" && E[cur] != "") msg = "(no error_log entry)"
  if (tsv) printf "DEF\t%d\t%s\t%s\t%s\t%s\t%s\n", cur, V[cur], D[cur], msg, pos, E[cur]
  else {
    printf "%s %s", V[cur], D[cur]
    if (V[cur] == "REJECT") printf "  ==> %s%s%s", msg, (pos != "" ? " (at offset " pos ")" : ""), (E[cur] != "" ? " [" E[cur] "]" : "")
    printf "\n"
    for (m = 1; m <= nl[cur]; m++) printf "    | %s\n", L[cur, m]
  }
  for (m = 1; m <= nk[cur]; m++) printf (tsv ? "KMSG\t%d\t%s\n" : "    ! %.0s%s\n"), cur, K[cur, m]
  cur = ""
}
/^@@O BEGIN / { kver = substr($0, 11); next }
/^@@O FILE / { file = $3; if (!tsv) printf "# kernel %s, %s, accel=%s\n", kver, file, accel; next }
/^@@O FWCFG / { fw = substr($0, 11); next }
/^@@O FATAL / { print "FATAL " substr($0, 11); next }
/^@@O NOTE / { print (tsv ? "NOTE\t" : "# ") substr($0, 10); next }
/^@@O DEF / { flush(); cur = $3; V[cur] = $4; next }
/^@@O ERRNO / { x = $0; sub(/^@@O ERRNO [0-9]+ /, "", x); sub(/^sh: (write error: )?/, "", x); E[$3] = (x in ERRN) ? ERRN[x] : x; next }
/^@@O LOG / { x = $0; sub(/^@@O LOG [0-9]+ /, "", x); if (cur != $3) { flush(); cur = $3; V[cur] = "ACCEPT" } L[$3, ++nl[$3]] = x; next }
/^@@O KMSG / { x = $0; sub(/^@@O KMSG [0-9]+ /, "", x); K[$3, ++nk[$3]] = x; next }
/^@@O REG / { flush(); x = substr($0, 9); if (tsv) print "EVENT\t" x; else { if (!hdr++) print "# registered events (kernel form):"; print "  " x }; next }
/^@@O ENABLEFAIL / { print (tsv ? "ENABLEFAIL\t" : "# enable failed: ") substr($0, 16); next }
/^@@O TRIGGER_RC / { trc = $3; next }
/^@@O TOUT / { next }
/^@@O TRACE_BEGIN/ { flush(); intr = 1; if (!tsv) print "# trace (trigger rc=" trc "):"; next }
/^@@O TRACE_END/ { intr = 0; next }
/^@@O END/ { done = 1; next }
/^@@O PAUSE/ { paused = 1; next }
intr { if (!raw && $0 ~ /^#/) { if ($0 ~ /entries-in-buffer/) stats = $0; next }; print (tsv ? "TRACE\t" : "") $0; next }
END {
  flush()
  if (!tsv) {
    if (stats != "") print "# " substr(stats, 3)
    printf "# timings: initramfs %ss, qemu boot..exit %ss%s\n", tinit, tboot, (tdump != "" ? ", dump " tdump "s -> " dump : "")
    if (fw != "") print "# qemu_fw_cfg: " fw
  }
  if (!done && !paused) { print "ORACLE-ERROR: guest did not finish (timeout or panic); console tail follows" > "/dev/stderr"; exit 2 }
}' "$W/r" || { tr -d '\r' < "$W/console.log" | tail -20 >&2; cat "$W/qemu.out" >&2; exit 2; }
