#!/usr/bin/env bash
# Fetches a Debian bookworm `-dbg` vmlinux (DWARF 5, ~630 MB unpacked) for the DWARF
# benchmarks (server/benches/dwarf.rs). Downloads the smallest flavour's debug package
# (`cloud`, ~280 MB) with `apt-get download` and extracts only `vmlinux` by streaming the
# .deb through `dpkg-deb --fsys-tarfile | tar`, so the package never lands unpacked.
#
#   scripts/fetch-dbg-vmlinux.sh [DIR]          # default DIR: target/dbg-vmlinux
#   FEVLINT_DBG_PACKAGE=linux-image-6.1.0-55-cloud-amd64-dbg scripts/fetch-dbg-vmlinux.sh
#
# Prints the path of the extracted vmlinux on the last line.
set -euo pipefail

# Pinned: the package the numbers in server/benches/README-dwarf.md were measured on.
PINNED=linux-image-6.1.0-56-cloud-amd64-dbg
PINNED_VERSION=6.1.192-2
PKG=${FEVLINT_DBG_PACKAGE:-$PINNED}
DIR=${1:-target/dbg-vmlinux}

for tool in apt-get apt-cache dpkg-deb tar; do
    command -v "$tool" >/dev/null || { echo "error: $tool is required (Debian/Ubuntu)" >&2; exit 1; }
done
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
OUT="$DIR/$PKG.vmlinux"
if [ -s "$OUT" ]; then
    echo "already there" >&2
    echo "$OUT"
    exit 0
fi

if ! apt-cache show "$PKG" >/dev/null 2>&1; then
    echo "error: $PKG is not in the configured archive (run apt-get update?). Available:" >&2
    apt-cache search --names-only 'linux-image-.*-cloud-amd64-dbg' | sort -V | tail -5 >&2
    exit 1
fi
SPEC=$PKG
if [ "$PKG" = "$PINNED" ] && apt-cache madison "$PKG" | grep -q " $PINNED_VERSION "; then
    SPEC="$PKG=$PINNED_VERSION"
fi

WORK=$(mktemp -d "$DIR/.fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# apt-get download writes into the current directory; as root it needs _apt to write there.
chmod 777 "$WORK"
(cd "$WORK" && apt-get download "$SPEC" >&2)
DEB=$(ls "$WORK"/*.deb)
dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$WORK" --wildcards '*vmlinux*'
rm -f "$DEB"
FOUND=$(find "$WORK" -type f -name 'vmlinux*' | head -1)
[ -n "$FOUND" ] || { echo "error: no vmlinux in $PKG" >&2; exit 1; }
mv "$FOUND" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "$OUT"
