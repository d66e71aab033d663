#!/usr/bin/env bash
# Fails when the release .wasm in dist/ is over its gzipped size budget.
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET_KB=400
wasm=$(ls dist/*.wasm)
raw=$(wc -c < "$wasm")
gzipped=$(gzip -9 -c "$wasm" | wc -c)
printf 'wasm: %s bytes raw, %s bytes gzipped (budget %s KB gzipped)\n' "$raw" "$gzipped" "$BUDGET_KB"
if [ "$gzipped" -gt $((BUDGET_KB * 1024)) ]; then
  echo "size budget exceeded: $gzipped > $((BUDGET_KB * 1024)) bytes" >&2
  exit 1
fi
