#!/usr/bin/env bash
# Runs every ClusterLab test: engine and CLI (unit, golden, property), browser
# tests (wasm-bindgen-test in headless Chromium), the release build and its
# size budget, and the end-to-end tests. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
export PATH="$PWD/scripts/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"

step() { printf '\n==> %s\n' "$*" >&2; }

step "engine and CLI: unit, golden and property tests"
cargo test --locked -p clusterlab-engine -p clusterlab-cli

step "benchmarks build (run them with: cargo bench -p clusterlab-engine)"
cargo bench --locked -p clusterlab-engine --no-run

step "browser tests: Yew components in headless Chromium"
cargo test --locked -p clusterlab-web --target wasm32-unknown-unknown --test browser

step "release build"
trunk build --release

step "size budget"
./scripts/size-budget.sh

step "end-to-end tests: the release app in headless Chromium"
node --test tests/e2e/
