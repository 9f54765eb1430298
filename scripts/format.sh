#!/usr/bin/env bash
# clang-format over every tracked C / C++ source and header (.clang-format at the root).
#   scripts/format.sh          check only: lists the files that differ, exits 1 if any does
#   scripts/format.sh --fix    rewrites them in place
# Uses clang-format 14 (Debian 12's `clang-format`); scripts/test.sh runs the check first.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp')
if [ "${1:-}" = "--fix" ]; then
    clang-format -i "${files[@]}"
    exit 0
fi
bad=()
for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
    echo "clang-format: ${#bad[@]} file(s) differ from .clang-format (fix: scripts/format.sh --fix):"
    printf '  %s\n' "${bad[@]}"
    exit 1
fi
echo "clang-format: ${#files[@]} files formatted"
