#!/usr/bin/env bash
# Re-record the real kernels' verdicts on tests/oracle/mainline-corpus.txt (and the
# tracing READMEs in data/). Boots each kernel once under QEMU (TCG, ~30 s with the
# corpus). Needs: qemu-system-x86 busybox-static cpio (Debian packages), network access
# to the Debian archive for the two 6.1 images.
#   oracle/record.sh [WORKDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
cd "$work"
[ -e linux-image-6.1.0-56-amd64-unsigned_6.1.192-2_amd64.deb ] ||
  apt-get download linux-image-6.1.0-56-amd64-unsigned=6.1.192-2
[ -e linux-image-6.1.0-47-amd64-unsigned_6.1.170-3_amd64.deb ] ||
  apt-get download linux-image-6.1.0-47-amd64-unsigned=6.1.170-3
corpus=$here/tests/oracle/mainline-corpus.txt
record() { # version kernel description
  local v=$1 k=$2 desc=$3
  # The generated corpus (oracle/generate-corpus.py): 3910 writes, 8-10 min a kernel.
  "$here/oracle/run-oracle.sh" --tsv --timeout 1500 "$k" "$here/tests/oracle/generated-corpus.txt" > "raw-gen-$v.tsv"
  {
    echo "# Real kernel verdicts for tests/oracle/generated-corpus.txt (oracle/generate-corpus.py), one write per line to dynamic_events, in order."
    echo "# Kernel: $desc"
    echo "# Made by: oracle/run-oracle.sh --tsv KERNEL tests/oracle/generated-corpus.txt | grep -a -E '^(DEF|EVENT)'"
    echo "# Columns: DEF line verdict definition message caret errno (caret = offset in the kernel's Command: echo)"
    grep -a -E '^(DEF|EVENT)' "raw-gen-$v.tsv"
  } > "$here/tests/oracle/generated-verdicts-$v.tsv"
  "$here/oracle/run-oracle.sh" --tsv "$k" "$corpus" > "raw-$v.tsv"
  {
    echo "# Real kernel verdicts for tests/oracle/mainline-corpus.txt, one write per line to dynamic_events, in order."
    echo "# Kernel: $desc"
    echo "# Made by: oracle/run-oracle.sh --tsv KERNEL tests/oracle/mainline-corpus.txt | grep -a -E '^(DEF|EVENT)'"
    echo "# Columns: DEF line verdict definition message caret errno (caret = offset in the kernel's Command: echo)"
    grep -a -E '^(DEF|EVENT)' "raw-$v.tsv"
  } > "$here/tests/oracle/mainline-verdicts-$v.tsv"
  # The README from a boot with no probe events (enabled probes could disturb the reader).
  echo '# no definitions' > nodefs.txt
  "$here/oracle/run-oracle.sh" --tsv --keep "keep-$v" -t 'cat /sys/kernel/tracing/README' "$k" nodefs.txt > /dev/null
  tr -d '\r' < "keep-$v/result.log" | sed -n 's/^@@O TOUT //p' > "readme-$v.txt"
}
record 6.12.117 "$root/fixtures/kernels/6.12.117+deb12-amd64/vmlinuz" "fixtures/kernels/6.12.117+deb12-amd64/vmlinuz (6.12.117-1~deb12u1)"
record 6.1.192 "$work/linux-image-6.1.0-56-amd64-unsigned_6.1.192-2_amd64.deb" "linux-image-6.1.0-56-amd64-unsigned 6.1.192-2 (Debian bookworm-security)"
record 6.1.170 "$work/linux-image-6.1.0-47-amd64-unsigned_6.1.170-3_amd64.deb" "linux-image-6.1.0-47-amd64-unsigned 6.1.170-3 (Debian bookworm)"
cp "readme-6.12.117.txt" "$here/data/readme-6.12.117-amd64.txt"
cp "readme-6.1.192.txt" "$here/data/readme-6.1.192-amd64.txt"
cmp -s "readme-6.1.170.txt" "readme-6.1.192.txt" || echo "record.sh: 6.1.170's README differs from 6.1.192's; add it to data/" >&2
echo "recorded in $here/tests/oracle (work files in $work)"
