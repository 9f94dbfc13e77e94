#!/usr/bin/env bash
# VS Code's part of scripts/bench-editors.py: code-server (the end-to-end test's install)
# with the fevlint .vsix built from editors/vscode as a user installs it, and the
# benchmark extension (extension/), the workbench loaded in headless Chromium.
#
#   scripts/bench-editors/vscode/run.sh FEVLINT_BINARY OUTDIR EDITS FILE...
#
# The workspace folder is the FILEs' parent's parent (each FILE sits in a folder with its
# fevlint.toml). Settings: VS Code's defaults, except what keeps a headless first start
# quiet (no welcome page, tips, workspace trust prompt, telemetry, updates); `fevlint.path`
# in the machine settings, as for a person using code-server. Writes OUTDIR/bench.json.
set -euo pipefail
fevlint=$1; out=$(realpath "$2"); edits=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../tests/editors/vscode/code-server-env.sh"
code_server_tools bench-editors
code_server_run fevlint-bench-vscode

"$ext/node_modules/.bin/tsc" -p "$ext"
(cd "$ext" && node_modules/.bin/vsce package --allow-missing-repository --out "$run/fevlint.vsix" >/dev/null)
cp -r "$here/extension" "$run/bench"
(cd "$run/bench" && "$ext/node_modules/.bin/vsce" package --allow-missing-repository --out "$run/bench.vsix" >/dev/null)

ws=$(dirname "$(dirname "$(realpath "$1")")")
files=$(python3 -c 'import json, os, sys; print(json.dumps([os.path.realpath(f) for f in sys.argv[1:]]))' "$@")
mkdir -p "$run/ud/User" "$run/ud/Machine" "$run/ext"
cat > "$run/ud/User/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "chat.disableAIFeatures": true
}
JSON
printf '{ "fevlint.path": "%s" }\n' "$fevlint" > "$run/ud/Machine/settings.json"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$port" > "$run/config.yaml"
CS=(env "PATH=$node24/bin:$PATH" "$cs" --config "$run/config.yaml" --user-data-dir "$run/ud" --extensions-dir "$run/ext")
"${CS[@]}" --install-extension "$run/fevlint.vsix" --install-extension "$run/bench.vsix" > "$out/install.log" 2>&1 \
    || { cat "$out/install.log" >&2; exit 2; }
FEVLINT_BENCH_DIR=$out FEVLINT_BENCH_FILES=$files FEVLINT_BENCH_EDITS=$edits \
    setsid bash -c 'echo $$ > "$0"; exec "$@"' "$run/cs.pgid" "${CS[@]}" --disable-telemetry \
    --disable-update-check --disable-workspace-trust "$ws" > "$out/code-server.log" 2>&1 < /dev/null &
code_server_wait bench-editors "$port" "$out/code-server.log"
NODE_PATH=$deps/pw/node_modules "$node24/bin/node" "$here/browser.js" "http://127.0.0.1:$port/?folder=$ws" "$out"
