#!/usr/bin/env bash
# Builds the addon for a Linux target other than the host's, as rloop.<platform>.node (the name
# `napi build --platform` gives): cargo-zigbuild links against glibc 2.17's symbols, older than
# every Node build needs (2.28), which Debian's cross gcc (glibc 2.36) cannot promise.
#   scripts/cross.sh aarch64-unknown-linux-gnu | armv7-unknown-linux-gnueabihf
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:?usage: scripts/cross.sh TARGET}
case $target in
  aarch64-unknown-linux-gnu) platform=linux-arm64-gnu ;;
  armv7-unknown-linux-gnueabihf) platform=linux-arm-gnueabihf ;;
  *) echo "scripts/cross.sh: no platform name for $target" >&2; exit 2 ;;
esac
command -v cargo-zigbuild >/dev/null || { echo "scripts/cross.sh: cargo-zigbuild is missing (pip install cargo-zigbuild)" >&2; exit 1; }

CARGO_PROFILE_RELEASE_STRIP=symbols cargo zigbuild --quiet --release --target "$target.2.17" >&2
cp "target/$target/release/librloop.so" "rloop.$platform.node"
echo "rloop.$platform.node"
