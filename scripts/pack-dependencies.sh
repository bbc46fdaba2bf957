#!/usr/bin/env bash
# Packs rloop's runtime dependencies, as installed in node_modules (the files their published
# tarballs hold), into OUT_DIR and prints the tarball paths: the package tests install rloop's
# tarballs offline, with an empty cache, so that nothing comes from the registry, and these come
# beside them. tar rather than npm pack: npm pack runs a dependency's build scripts and prints
# what the npm config it inherits says (under `npm test`, nothing).
#   scripts/pack-dependencies.sh OUT_DIR
set -euo pipefail

out_arg=${1:?usage: scripts/pack-dependencies.sh OUT_DIR}
mkdir -p "$out_arg"
out=$(cd "$out_arg" && pwd)
cd "$(dirname "$0")/.."
for dep in $(node -p "Object.keys(require('./package.json').dependencies ?? {}).join(' ')"); do
  tgz="$out/${dep//\//-}.tgz"
  tar czf "$tgz" -C "node_modules/$dep/.." --transform "s,^${dep##*/},package," "${dep##*/}"
  echo "$tgz"
done
