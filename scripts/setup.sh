#!/usr/bin/env bash
# Installs what building (and, with --test, testing) ClusterLab needs.
# Idempotent: every step checks what is there before it installs, and every
# install comes from a package registry (crates.io, npm, Debian), never from a
# binary download.
set -euo pipefail
cd "$(dirname "$0")/.."

want_test_tools=0
[ "${1:-}" = "--test" ] && want_test_tools=1

TRUNK_VERSION=0.21.14
# wasm-bindgen-cli must equal the wasm-bindgen crate that Cargo.lock pins.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)

say() { printf '[setup] %s\n' "$*" >&2; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# The test command checks formatting and lints.
if [ "${want_test_tools:-0}" = 1 ]; then
  for component in rustfmt clippy; do
    if ! rustup component list --installed | grep -q "^$component"; then
      say "adding the $component component"
      rustup component add "$component"
    fi
  done
fi

# Release LTO makes these tools' own builds slow on 2 cores and buys nothing here.
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16

if [ "$(trunk --version 2>/dev/null || true)" != "trunk $TRUNK_VERSION" ]; then
  say "installing trunk $TRUNK_VERSION (takes a few minutes once)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
  # Not --locked: its lockfile names a crate version the registry mirror lacks.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

# wasm-opt (npm binaryen) for the build; playwright-core for end-to-end tests.
if [ ! -x scripts/node_modules/.bin/wasm-opt ] || [ scripts/package-lock.json -nt scripts/node_modules/.package-lock.json ]; then
  say "installing node tools (binaryen, playwright-core)"
  npm ci --prefix scripts --no-audit --no-fund --loglevel=error
fi

if [ "$want_test_tools" = 1 ] && { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; }; then
  say "installing Debian's chromium and chromium-driver"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# The real tools the emulated ones are compared with (crates/engine/tests):
# GNU coreutils, grep, sed, awk (gawk), bash, diffutils, findutils, file, column.
if [ "$want_test_tools" = 1 ]; then
  missing=""
  for pair in grep:grep sed:sed gawk:gawk bash:bash diff:diffutils find:findutils file:file column:bsdextrautils stat:coreutils; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing="$missing ${pair#*:}"
  done
  if [ -n "$missing" ]; then
    say "installing the reference tools:$missing"
    sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq $missing >/dev/null
  fi
fi

# A real Learning Record Store for the xAPI end-to-end test: Ralph, from
# PyPI, in a virtual environment under target/ (its `lrs` extra misses
# `requests`, without which the server does not start).
RALPH_VERSION=5.1.0
if [ "$want_test_tools" = 1 ] && [ "$(target/ralph/bin/ralph --version 2>/dev/null | awk '{print $NF}')" != "$RALPH_VERSION" ]; then
  say "installing Ralph $RALPH_VERSION (an xAPI LRS) into target/ralph"
  python3 -m venv target/ralph
  target/ralph/bin/pip install --quiet --disable-pip-version-check "ralph-malph[lrs,cli]==$RALPH_VERSION" requests
fi

# Trunk must find these on PATH instead of downloading its own.
export PATH="$PWD/scripts/node_modules/.bin:$HOME/.cargo/bin:$PATH"
say "ready: trunk $TRUNK_VERSION, wasm-bindgen $WASM_BINDGEN_VERSION, $(wasm-opt --version)"
