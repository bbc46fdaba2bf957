#!/usr/bin/env bash
# Builds the addon to publish for a Linux target, the host's too, and prints the file's path:
# cargo-zigbuild links against glibc 2.17's symbols, older than every Node build needs (2.28),
# which neither the host's gcc nor Debian's cross gcc (glibc 2.36) can promise. `npm run build`
# stays the native build for development; napi passes it --target too, so this build has its
# own target dir, else the two would rebuild over each other, and a fingerprint that missed the
# linker could pass the native build off as this one. Cargo's freshness check makes reruns cheap.
# A musl target links musl's libc dynamically (-crt-static off: Rust's musl targets link it
# statically by default, and then build no cdylib), as Node does on Alpine.
#   scripts/zigbuild.sh x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu | armv7-unknown-linux-gnueabihf
#                       | x86_64-unknown-linux-musl | aarch64-unknown-linux-musl
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:?usage: scripts/zigbuild.sh TARGET}
command -v cargo-zigbuild >/dev/null || { echo "scripts/zigbuild.sh: cargo-zigbuild is missing (pip install cargo-zigbuild)" >&2; exit 1; }

case $target in
  *-musl*)
    flags_var="CARGO_TARGET_$(echo "$target" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
    export "$flags_var=-C target-feature=-crt-static"
    zig_target=$target ;;
  *) zig_target=$target.2.17 ;;
esac
CARGO_TARGET_DIR=target/zig CARGO_PROFILE_RELEASE_STRIP=symbols cargo zigbuild --quiet --release --target "$zig_target" >&2
echo "$PWD/target/zig/$target/release/librloop.so"
