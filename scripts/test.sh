#!/usr/bin/env bash
# Runs every ClusterLab test: engine and CLI (unit, golden, property), browser
# tests (wasm-bindgen-test in headless Chromium), the release build and its
# size budget, a check that a new lab changes no byte of the .wasm, and the
# end-to-end tests. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
. ./scripts/env.sh

step() { printf '\n==> %s\n' "$*" >&2; }

step "formatting (rustfmt.toml)"
cargo fmt --all --check

step "lab data for the browser tests (which the lints compile too)"
cargo run --locked --quiet --profile tool -p clusterlab-cli -- build labs --out target/lab-data

step "lints, natively and for the browser"
cargo clippy --locked --workspace --all-targets -- -D warnings
cargo clippy --locked -p clusterlab-web --target wasm32-unknown-unknown --all-targets --features inline-engine,authoring -- -D warnings

step "engine and CLI: unit, golden and property tests"
cargo test --locked -p clusterlab-engine -p clusterlab-cli

step "the web app's own unit tests (the page's store action by action, line editing, the terminal's text rules), natively"
cargo test --locked -p clusterlab-web --lib --features authoring

step "benchmarks build (run them with: cargo bench -p clusterlab-engine; the page's: node tests/perf/bench.mjs)"
cargo bench --locked -p clusterlab-engine --no-run

step "lab solutions: each lab's [solution] earns full marks on several variants, a wrong diagnosis none"
cargo run --locked --quiet --profile tool -p clusterlab-cli -- test labs

step "browser tests: Yew components in headless Chromium"
cargo test --locked -p clusterlab-web --target wasm32-unknown-unknown --test browser --features inline-engine,authoring

step "release build"
trunk build --release

step "size budget"
./scripts/size-budget.sh

step "a lab dropped into labs/ reaches the app with the .wasm unchanged"
extra=labs/zz-e2e-extra-lab.toml
trap 'rm -f "$extra"' EXIT
before=$(sha256sum dist/*.wasm)
cp tests/e2e/extra-lab.toml "$extra"
trunk build --release
after=$(sha256sum dist/*.wasm)
if [ "$before" != "$after" ]; then
  printf 'adding a lab changed the .wasm:\n%s\n%s\n' "$before" "$after" >&2
  exit 1
fi
grep -q '"id":"e2e-extra-lab"' dist/labs/index.json
echo "the new lab is in dist/labs/index.json; the .wasm files are byte for byte the same" >&2
export CLUSTERLAB_EXTRA_LAB=e2e-extra-lab

step "end-to-end tests: the release app in headless Chromium"
node --test tests/e2e/
