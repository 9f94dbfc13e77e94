#!/usr/bin/env bash
# Fetches one Debian kernel image package (.deb) through apt into a cache and prints its
# path: the real kernels the tests boot under QEMU (tests/oracle/run-oracle.sh takes the
# .deb as it is). Cached by package and version; written atomically, so concurrent runs
# share it.
#
#   scripts/fetch-kernel-deb.sh PACKAGE[=VERSION] [DIR]     # default DIR: target/kernel-debs
#   scripts/fetch-kernel-deb.sh linux-image-6.1.0-56-amd64-unsigned=6.1.192-2
set -euo pipefail
SPEC=${1:?usage: fetch-kernel-deb.sh PACKAGE[=VERSION] [DIR]}
DIR=${2:-$(dirname "$0")/../target/kernel-debs}
PKG=${SPEC%%=*}
VER=${SPEC#*=}
[ "$VER" = "$SPEC" ] && VER=$(apt-cache show "$PKG" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
[ -n "$VER" ] || { echo "error: $PKG is not in the configured archive (apt-get update?)" >&2; exit 1; }
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
OUT="$DIR/${PKG}_${VER}_amd64.deb"
if [ -s "$OUT" ]; then
    echo "$OUT"
    exit 0
fi
WORK=$(mktemp -d "$DIR/.fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
chmod 777 "$WORK" # apt-get download, as root, writes as _apt
(cd "$WORK" && apt-get download "$PKG=$VER" >&2)
DEB=$(ls "$WORK"/*.deb)
dpkg-deb --info "$DEB" >/dev/null # a whole package, or an error
mv "$DEB" "$OUT"
echo "$OUT"
