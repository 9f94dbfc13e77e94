#!/bin/sh
# Kakoune (Debian's kakoune 2022.10.31), headless with the dummy UI, loads
# editors/kakoune/fev.kak and opens a script: the filetype is fev, the fev highlighters
# are installed on the window, and the kak-lsp server entry (the `lsp_servers` option,
# declared here as kak-lsp declares it, since kak-lsp is not packaged for Debian) names
# `fevlint lsp` in valid TOML; a .dynevents file next to it gets its filetype and the same
# server entry; then a .bt script under kak-lsp shows fevlint's K210 (below). Prints
# `N passed, N failed`; exit 1 on a failure.
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

# A bpftrace script with kak-lsp (crates.io kak-lsp 22.0.0, from install-test-deps.sh):
# tests/editors/kernel/kernel.bt next to a fevlint.toml naming the 6.12.117 fixture gets the
# `bpftrace` filetype, fev.kak's server entry starts `fevlint lsp` (FEVLINT, as `fevlint`
# on PATH), and kak-lsp lists its K210 warning. A second Kakoune session, about 3 s.
bt_dir="$out/bt"
mkdir -p "$bt_dir" "$out/bin"
printf 'kernels = ["%s"]\n' "$root/fixtures/kernels/6.12.117+deb12-amd64" > "$bt_dir/fevlint.toml"
cp "$root/tests/editors/kernel/kernel.bt" "$bt_dir/kernel.bt"
ln -s "$(command -v "${FEVLINT:-fevlint}")" "$out/bin/fevlint"
bt_session=fevbt$$
send() { printf '%s\n' "$1" | kak -p "$bt_session" 2>/dev/null || true; }
if command -v kak-lsp >/dev/null; then
    PATH="$out/bin:$PATH" timeout 60 kak -ui dummy -s "$bt_session" -n -e "
        evaluate-commands %sh{kak-lsp}
        declare-option str toolsclient client0
        declare-option str docsclient client0
        declare-option str jumpclient client0
        try %{ declare-option int jump_current_line 0 }
        source '$root/editors/kakoune/fev.kak'
        lsp-enable
        edit '$bt_dir/kernel.bt'
    " </dev/null >"$out/kak-bt.log" 2>&1 &
    bt_pid=$!
    for _ in $(seq 1 120); do
        send "eval -buffer '$bt_dir/kernel.bt' %{ echo -to-file '$out/bt_counts' %opt{filetype} %opt{lsp_diagnostic_error_count} %opt{lsp_diagnostic_warning_count} }"
        [ "$(cat "$out/bt_counts" 2>/dev/null)" = "bpftrace 0 1" ] && break
        sleep 0.25
    done
    check "bpftrace filetype and one kak-lsp warning" bt_counts "bpftrace 0 1"
    send "eval -client client0 %{ lsp-diagnostics }"
    for _ in $(seq 1 40); do
        grep -q 'K210' "$out/bt_diagnostics" 2>/dev/null && break
        send "eval -buffer *diagnostics* %{ write -force '$out/bt_diagnostics' }"
        sleep 0.25
    done
    if grep -q 'kernel.bt:3:8: \[warning\]\[fevlint\]\[K210\] kprobe target `vfs_raed`' "$out/bt_diagnostics" 2>/dev/null; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL kak-lsp *diagnostics*: $(cat "$out/bt_diagnostics" 2>/dev/null)"; cat "$out/kak-bt.log"
    fi
    send 'eval -client client0 %{ lsp-exit }'
    send 'kill!'
    wait "$bt_pid" || true
else
    fail=$((fail + 1)); echo "FAIL kak-lsp is not installed: run scripts/install-test-deps.sh"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
