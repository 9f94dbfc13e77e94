#!/usr/bin/env bash
# Installs fevlint for action.yml (GitHub Actions) or any CI.
#   FEVLINT_VERSION   ''        build FEVLINT_SOURCE/server (default: this checkout)
#                     path:DIR  build DIR/server
#                     git:URL@REV  cargo install --git URL --rev REV fevlint
#                     installed use the fevlint already on PATH
#   FEVLINT_SOURCE    the fevlint checkout (the action's own: $GITHUB_ACTION_PATH)
# `cargo install --locked --path server` puts the binary in ~/.cargo/bin (on PATH on
# GitHub's runners); CARGO_INSTALL_ROOT moves it.
set -euo pipefail
src=${FEVLINT_SOURCE:-$(cd "$(dirname "$0")/.." && pwd)}
case "${FEVLINT_VERSION:-}" in
    installed)
        command -v fevlint >/dev/null || { echo "::error::fevlint is not on PATH (version: installed)"; exit 2; } ;;
    path:*)
        cargo install --locked --path "${FEVLINT_VERSION#path:}/server" ;;
    git:*@*)
        spec=${FEVLINT_VERSION#git:}
        cargo install --locked --git "${spec%@*}" --rev "${spec##*@}" fevlint ;;
    '')
        cargo install --locked --path "$src/server" ;;
    *)
        echo "::error::unknown version '${FEVLINT_VERSION}' (expected empty, path:DIR, git:URL@REV or installed)"; exit 2 ;;
esac
root=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}
[ -n "${GITHUB_PATH:-}" ] && [ "${FEVLINT_VERSION:-}" != installed ] && echo "$root/bin" >> "$GITHUB_PATH"
"$( [ "${FEVLINT_VERSION:-}" = installed ] && command -v fevlint || echo "$root/bin/fevlint")" --version
