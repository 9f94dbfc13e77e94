#!/usr/bin/env bash
# The VS Code end-to-end test: the fevlint .vsix in a real VS Code workbench.
#
#   tests/editors/vscode/run-e2e.sh FEVLINT.vsix FEVLINT_BINARY SCRIPT KERNEL HOVER_LINE:COL FIX_LINE:COL OUTDIR
#
# code-server (npm; VS Code 1.139.1's server and web workbench, run by Node 24 from npm)
# installs the .vsix and a test-only harness extension into a throw-away profile whose
# settings point `fevlint.path` at FEVLINT_BINARY and `fevlint.kernels` at KERNEL, opens a
# copy of SCRIPT's folder, and Debian's Chromium (headless, driven by playwright-core)
# loads the workbench. What both sides saw lands in OUTDIR: diagnostics.json, hover.json,
# fixed.json, commands.json, bpftrace.json (tests/editors/kernel/kernel.bt) (the harness, through the VS Code API), browser.json (the
# screen: squiggles, Problems count, status bar) and screenshots (*.png), plus
# code-server.log. server/tests/vscode.rs runs this and checks those files.
# FEVLINT_E2E_MODE=bpf (with SCRIPT a workspace folder, see below) runs the harness's BPF
# scenario instead: diagnostics.json, hover.json, browser.json, workbench.png, hover.png.
#
# The tools come from scripts/install-test-deps.sh (under ~/.cache/fevlint-test-deps/vscode,
# or $FEVLINT_VSCODE_DEPS). The script stops code-server and everything it started.
set -euo pipefail
vsix=$(realpath "$1"); fevlint=$(realpath "$2"); script=$(realpath "$3"); kernel=$(realpath -m "$4")
hover=$5; fix=$6; out=$(mkdir -p "$7" && realpath "$7")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/code-server-env.sh"
code_server_tools run-e2e

code_server_run fevlint-vscode
rm -f "$out"/*.json "$out"/*.png "$out"/go-*

# The harness extension, packaged offline with the extension's own vsce.
cp -r "$here/harness" "$run/harness"
(cd "$run/harness" && "$root/editors/vscode/node_modules/.bin/vsce" package --allow-missing-repository --out "$run/harness.vsix" >/dev/null)

ws=$run/workspace
mkdir -p "$ws" "$run/ud/User" "$run/ud/Machine" "$run/ext"
if [ -d "$script" ]; then
    # FEVLINT_E2E_MODE=bpf: SCRIPT is a workspace (its fevlint.toml names the kernels and
    # objects), FEVLINT_E2E_OPEN the file in it to open; KERNEL is `-`, FIX_LINE:COL `-`.
    cp -r "$script/." "$ws/"
    file=$ws/$FEVLINT_E2E_OPEN
else
    cp "$script" "$ws/"
    file=$ws/$(basename "$script")
fi
kernels=
[ "$4" = - ] || kernels="\"fevlint.kernels\": [\"$kernel\"],"
cat > "$run/ud/User/settings.json" <<JSON
{
  "fevlint.path": "$fevlint",
  $kernels
  "fevlint.core": "$run/no-such.core",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "chat.disableAIFeatures": true,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "editor.hover.delay": 100,
  "files.autoSave": "off"
}
JSON
# `fevlint.path` is machine-overridable: in code-server, user settings do not set it, the
# remote machine's settings do (as for a person using code-server).
printf '{ "fevlint.path": "%s" }\n' "$fevlint" > "$run/ud/Machine/settings.json"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$port" > "$run/config.yaml"
CS=(env "PATH=$node24/bin:$PATH" "$cs" --config "$run/config.yaml" --user-data-dir "$run/ud" --extensions-dir "$run/ext")
"${CS[@]}" --install-extension "$vsix" --install-extension "$run/harness.vsix" > "$out/install.log" 2>&1 \
    || { cat "$out/install.log" >&2; exit 2; }

# Its own session and process group, so that cleanup stops code-server, the extension
# host and the language server with one kill.
FEVLINT_E2E_DIR=$out FEVLINT_E2E_FILE=$file FEVLINT_E2E_HOVER=$hover FEVLINT_E2E_FIX=$fix \
    FEVLINT_E2E_BT=$(cat "$root/tests/editors/kernel/kernel.bt") \
    setsid bash -c 'echo $$ > "$0"; exec "$@"' "$run/cs.pgid" "${CS[@]}" --disable-telemetry \
    --disable-update-check --disable-workspace-trust "$ws" > "$out/code-server.log" 2>&1 < /dev/null &
code_server_wait run-e2e "$port" "$out/code-server.log"
NODE_PATH=$deps/pw/node_modules "$node24/bin/node" "$here/code_server_e2e.js" "http://127.0.0.1:$port/?folder=$ws" "$out"
