#!/usr/bin/env bash
# Builds ClusterLab and serves it on http://127.0.0.1:8080 (rebuilds on change).
# Installs what it needs first (see scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
. ./scripts/env.sh
cargo fetch --quiet
exec trunk serve --release "$@"
