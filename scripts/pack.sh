#!/usr/bin/env bash
# Packs rloop and its platform package rloop-linux-x64-gnu into OUT_DIR and prints the two
# tarball paths, main first. Builds the addon first when it is missing or older than its sources.
set -euo pipefail

out_arg=${1:?usage: scripts/pack.sh OUT_DIR}
mkdir -p "$out_arg"
out=$(cd "$out_arg" && pwd)
cd "$(dirname "$0")/.."

addon=rloop.linux-x64-gnu.node
if [[ ! -f $addon || ! -f binding.js ]] || [[ -n $(find src Cargo.toml Cargo.lock build.rs -newer "$addon" -print -quit) ]]; then
  npm run --silent build >&2
fi

# The napi-rs way: npm/<platform>/package.json from package.json's napi config, then
# `napi artifacts` copies each built .node from ./artifacts into its platform package.
npx --no-install napi create-npm-dirs >&2
rm -rf artifacts && mkdir artifacts && cp "$addon" artifacts/
npm run --silent artifacts >&2

npm pack --silent --pack-destination "$out" | sed "s|^|$out/|"
(cd npm/linux-x64-gnu && npm pack --silent --pack-destination "$out") | sed "s|^|$out/|"
