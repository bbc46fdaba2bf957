#!/usr/bin/env bash
# Builds the addon to publish for a target, the host's too, and prints the file's path:
# cargo-zigbuild links against glibc 2.17's symbols, older than every Node build needs (2.28),
# which neither the host's gcc nor Debian's cross gcc (glibc 2.36) can promise. `npm run build`
# stays the native build for development; napi passes it --target too, so this build has its
# own target dir, else the two would rebuild over each other, and a fingerprint that missed the
# linker could pass the native build off as this one. Cargo's freshness check makes reruns cheap.
# - musl links musl's libc dynamically (-crt-static off: Rust's musl targets link it statically
#   by default, and then build no cdylib), as Node does on Alpine.
# - Windows is built with the GNU toolchain zig brings, for the official (MSVC) Node: the addon
#   looks N-API and libuv up in node.exe (Cargo.toml, src/runtime/uv.rs). napi's build script still
#   wants a libnode.dll to link to: an empty one is given, and no symbol comes from it.
# - macOS: -dead_strip_dylibs keeps the libiconv Rust's std names for no symbol out of the
#   load commands, so libSystem is all the addon loads.
#   scripts/zigbuild.sh x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu | armv7-unknown-linux-gnueabihf
#                       | x86_64-unknown-linux-musl | aarch64-unknown-linux-musl
#                       | x86_64-pc-windows-gnu | aarch64-apple-darwin | x86_64-apple-darwin
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:?usage: scripts/zigbuild.sh TARGET}
command -v cargo-zigbuild >/dev/null || { echo "scripts/zigbuild.sh: cargo-zigbuild is missing (pip install cargo-zigbuild)" >&2; exit 1; }

flags_var="CARGO_TARGET_$(echo "$target" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
out=librloop.so
zig_target=$target
case $target in
  *-musl*) export "$flags_var=-C target-feature=-crt-static" ;;
  *-windows-gnu)
    out=rloop.dll
    stub=$PWD/target/zig/libnode-stub
    if [[ ! -f $stub/node.lib ]]; then
      mkdir -p "$stub"
      echo 'int rloop_libnode_stub;' > "$stub/stub.c"
      (cd "$stub" && cargo-zigbuild zig cc -- -target x86_64-windows-gnu -shared -o libnode.dll stub.c && mv stub.lib node.lib)
    fi
    export LIBNODE_PATH=$stub ;;
  *-apple-darwin)
    out=librloop.dylib
    export "$flags_var=-C link-arg=-Wl,-dead_strip_dylibs" ;;
  *) zig_target=$target.2.17 ;;
esac
CARGO_TARGET_DIR=target/zig CARGO_PROFILE_RELEASE_STRIP=symbols cargo zigbuild --quiet --release --target "$zig_target" >&2
echo "$PWD/target/zig/$target/release/$out"
