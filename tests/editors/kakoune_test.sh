#!/bin/sh
# Kakoune (Debian's kakoune 2022.10.31), headless with the dummy UI, loads
# editors/kakoune/fev.kak and opens a script: the filetype is fev, the fev highlighters
# are installed on the window, and the kak-lsp server entry (the `lsp_servers` option,
# declared here as kak-lsp declares it, since kak-lsp is not packaged for Debian) names
# `fevlint lsp` in valid TOML; a .dynevents file next to it gets its filetype and the same
# server entry. Prints `N passed, N failed`; exit 1 on a failure.
#   tests/editors/kakoune_test.sh FILE.fev
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
file=$(realpath "$1")
mainline=${file%.fev}.dynevents
out=$(mktemp -d)
export HOME="$out/home"
mkdir -p "$HOME"
trap 'rm -rf "$out"' EXIT
session=fevtest$$
timeout 30 kak -ui dummy -s "$session" -n -e "
    declare-option -hidden str lsp_servers
    source '$root/editors/kakoune/fev.kak'
    edit '$file'
    echo -to-file '$out/filetype' %opt{filetype}
    echo -to-file '$out/lsp_servers' %opt{lsp_servers}
    try %{ add-highlighter window/fev group; echo -to-file '$out/window_hl' missing } catch %{ echo -to-file '$out/window_hl' present }
    try %{ add-highlighter shared/fev/code/function group; echo -to-file '$out/shared_hl' missing } catch %{ echo -to-file '$out/shared_hl' present }
    echo -to-file '$out/comment' %opt{comment_line}
    edit '$mainline'
    echo -to-file '$out/dyn_filetype' %opt{filetype}
    echo -to-file '$out/dyn_lsp_servers' %opt{lsp_servers}
    evaluate-commands -buffer *debug* %{ write -force '$out/debug' }
    kill!
" </dev/null >"$out/kak.log" 2>&1 || { fail_kak=1; echo "kak failed:"; cat "$out/kak.log"; }
pass=0; fail=0
check() { # NAME FILE WANT
    have=$(cat "$out/$2" 2>/dev/null || echo '(nothing)')
    if [ "$have" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: have '$have', want '$3'"; fi
}
check filetype filetype fev
check "window highlighter" window_hl present
check "shared highlighter" shared_hl present
check "comment_line" comment '#'
check "filetype of a .dynevents file" dyn_filetype dynevents
for servers in lsp_servers dyn_lsp_servers; do
if python3 -c '
import sys, tomllib
servers = tomllib.loads(open(sys.argv[1]).read())
assert servers["fevlint"]["command"] == "fevlint" and servers["fevlint"]["args"] == ["lsp"], servers
' "$out/$servers" 2>"$out/toml.err"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $servers: $(cat "$out/$servers" 2>/dev/null) $(cat "$out/toml.err")"; fi
done
if [ ! -s "$out/debug" ] || grep -qi 'error' "$out/debug"; then fail=$((fail + 1)); echo "FAIL *debug* missing or has errors:"; cat "$out/debug" 2>/dev/null || true; else pass=$((pass + 1)); fi
[ -z "${fail_kak:-}" ] || fail=$((fail + 1))
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
