#!/bin/sh
# Copies the tree-sitter queries of grammar/queries/ (the single source) into the
# editor plugins. `server/tests/lsp_queries.rs` fails when a copy is stale.
#
#   scripts/sync-queries.sh           # copy
#   scripts/sync-queries.sh --check   # exit 1 when a copy differs, write nothing

set -eu
cd "$(dirname "$0")/.."
dest=editors/nvim/queries/fev
status=0
for src in grammar/queries/*.scm; do
    out="$dest/$(basename "$src")"
    if [ "${1:-}" = "--check" ]; then
        if ! cmp -s "$src" "$out"; then
            echo "stale: $out (run scripts/sync-queries.sh)" >&2
            status=1
        fi
    else
        mkdir -p "$dest"
        cp "$src" "$out"
        echo "copied $src -> $out"
    fi
done
exit $status
