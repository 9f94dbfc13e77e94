#!/usr/bin/env bash
# The check step of action.yml, usable from any CI:
#   FEVLINT_PATHS    scripts (files/directories), whitespace-separated (default .)
#   FEVLINT_KERNELS  kernels, one per line (each becomes --kernel)
#   FEVLINT_LOCK     a fevlint.lock (--lock), optional
#   FEVLINT_ARGS     further `fevlint check` arguments, whitespace-separated
#   FEVLINT_SARIF    where to write the SARIF log (default fevlint.sarif)
#   FEVLINT          the binary (default: fevlint on PATH)
# Writes the SARIF log, prints GitHub annotations (--format github) and the human
# report, appends a summary to $GITHUB_STEP_SUMMARY and exit-code/errors/warnings/
# sarif-file to $GITHUB_OUTPUT when they are set. Exits 0 unless fevlint could not run
# (its exit status 2): the gate is a later step, after the SARIF upload, so that code
# scanning sees the findings of a failing check. Needs bash and python3.
#
#   action-check.sh --gate   with FEVLINT_FAIL_ON (error|warning|never), FEVLINT_EXIT,
#                            FEVLINT_ERRORS, FEVLINT_WARNINGS: exit 1 when the gate fails.
set -euo pipefail

if [ "${1:-}" = --gate ]; then
    exit_code=${FEVLINT_EXIT:-2}
    errors=${FEVLINT_ERRORS:-0}
    warnings=${FEVLINT_WARNINGS:-0}
    fail_on=${FEVLINT_FAIL_ON:-error}
    case "$fail_on" in
        never) exit 0 ;;
        warning) [ "$exit_code" = 0 ] && [ "$warnings" = 0 ] && exit 0 ;;
        error) [ "$exit_code" = 0 ] && exit 0 ;;
        *) echo "::error::fail-on must be error, warning or never, not '$fail_on'"; exit 2 ;;
    esac
    echo "fevlint: $errors errors, $warnings warnings (fail-on: $fail_on, exit status $exit_code)"
    exit 1
fi

bin=${FEVLINT:-fevlint}
sarif=${FEVLINT_SARIF:-fevlint.sarif}
args=(check)
while IFS= read -r k; do
    k=${k#"${k%%[![:space:]]*}"}
    k=${k%"${k##*[![:space:]]}"}
    if [ -n "$k" ]; then args+=(--kernel "$k"); fi
done <<< "${FEVLINT_KERNELS:-}"
if [ -n "${FEVLINT_LOCK:-}" ]; then args+=(--lock "$FEVLINT_LOCK"); fi
read -r -a extra <<< "${FEVLINT_ARGS:-}" || true
read -r -a paths <<< "${FEVLINT_PATHS:-.}" || true
if [ ${#paths[@]} -eq 0 ]; then paths=(.); fi

mkdir -p "$(dirname "$sarif")"
set +e
"$bin" "${args[@]}" "${extra[@]}" --format sarif "${paths[@]}" > "$sarif.tmp"
status=$?
set -e
if [ "$status" -ge 2 ]; then
    rm -f "$sarif.tmp"
    echo "::error::fevlint check could not run (exit status $status)"
    "$bin" "${args[@]}" "${extra[@]}" "${paths[@]}" || true
    if [ -n "${GITHUB_OUTPUT:-}" ]; then { echo "exit-code=$status"; echo "sarif-file="; } >> "$GITHUB_OUTPUT"; fi
    exit "$status"
fi
mv "$sarif.tmp" "$sarif"
# Annotations on the pull request, then the human-readable report for the log and summary.
"$bin" "${args[@]}" "${extra[@]}" --format github "${paths[@]}" 2>/dev/null || true
report=$("$bin" "${args[@]}" "${extra[@]}" "${paths[@]}" 2>&1 || true)
printf '%s\n' "$report"
read -r errors warnings < <(python3 -c '
import json, sys
results = [r for run in json.load(open(sys.argv[1]))["runs"] for r in run.get("results", [])]
print(sum(r.get("level") == "error" for r in results), sum(r.get("level") == "warning" for r in results))
' "$sarif")
echo "fevlint: $errors errors, $warnings warnings, exit status $status; SARIF in $sarif"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    { echo "exit-code=$status"; echo "errors=$errors"; echo "warnings=$warnings"; echo "sarif-file=$sarif"; } >> "$GITHUB_OUTPUT"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    {
        echo "### fevlint: $errors errors, $warnings warnings"
        echo
        echo '```'
        printf '%s\n' "$report" | tail -n 200
        echo '```'
    } >> "$GITHUB_STEP_SUMMARY"
fi
exit 0
