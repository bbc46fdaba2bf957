#!/usr/bin/env bash
# Packs rloop's runtime dependencies, as installed in node_modules, into OUT_DIR and prints the
# tarball paths: the package tests install rloop's tarballs offline, with an empty cache, so
# that nothing comes from the registry, and these come beside them.
#   scripts/pack-dependencies.sh OUT_DIR
set -euo pipefail

out_arg=${1:?usage: scripts/pack-dependencies.sh OUT_DIR}
mkdir -p "$out_arg"
out=$(cd "$out_arg" && pwd)
cd "$(dirname "$0")/.."
for dep in $(node -p "Object.keys(require('./package.json').dependencies ?? {}).join(' ')"); do
  echo "$out/$(npm pack --silent --ignore-scripts --pack-destination "$out" "./node_modules/$dep" | tail -1)"
done
