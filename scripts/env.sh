# Sourced by the scripts that build or test: the tools setup.sh installed, and
# the flags that make the .wasm the same bytes on every machine.
export PATH="$PWD/scripts/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
# Panic locations embed each dependency's absolute source path, which holds
# $CARGO_HOME: a longer home on CI made the page module 1.5 KB larger than
# here and broke the size budget. Dropping the prefix makes the bytes (and the
# budget) independent of where cargo keeps its registry.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}/registry/src/="
