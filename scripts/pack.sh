#!/usr/bin/env bash
# Packs rloop and its platform packages into OUT_DIR and prints the tarball paths, main first,
# then one per platform in the order asked (default: every target of package.json's napi
# config). Each platform's addon is built by scripts/zigbuild.sh (glibc 2.17 symbols), the
# host's too: the one `npm run build` leaves at the top is for development only. win32-x64-msvc,
# the name napi-rs's loader asks for on the official Node for Windows, is built with the GNU
# toolchain (scripts/zigbuild.sh says why it loads there).
#   scripts/pack.sh OUT_DIR [PLATFORM...]     e.g. scripts/pack.sh out linux-x64-gnu
set -euo pipefail

out_arg=${1:?usage: scripts/pack.sh OUT_DIR [PLATFORM...]}
shift
mkdir -p "$out_arg"
out=$(cd "$out_arg" && pwd)
cd "$(dirname "$0")/.."

declare -A triple=([linux-x64-gnu]=x86_64-unknown-linux-gnu [linux-arm64-gnu]=aarch64-unknown-linux-gnu
  [linux-arm-gnueabihf]=armv7-unknown-linux-gnueabihf [linux-x64-musl]=x86_64-unknown-linux-musl
  [linux-arm64-musl]=aarch64-unknown-linux-musl [win32-x64-msvc]=x86_64-pc-windows-gnu
  [darwin-arm64]=aarch64-apple-darwin [darwin-x64]=x86_64-apple-darwin)
# package.json's napi targets, by platform name
all=(linux-x64-gnu linux-arm64-gnu linux-arm-gnueabihf linux-x64-musl linux-arm64-musl win32-x64-msvc darwin-arm64 darwin-x64)
platforms=("$@")
((${#platforms[@]})) || platforms=("${all[@]}")

[[ -f binding.js ]] || npm run --silent build >&2 # the loader, shipped in the main package
declare -A built
for p in "${platforms[@]}"; do
  [[ -n ${triple[$p]:-} ]] || { echo "scripts/pack.sh: unknown platform $p" >&2; exit 2; }
  built[$p]=$(scripts/zigbuild.sh "${triple[$p]}")
done

# The napi-rs way: npm/<platform>/package.json from package.json's napi config, each built
# .node beside it (`napi artifacts` would want every target's, and moves them).
npx --no-install napi create-npm-dirs >&2
for p in "${platforms[@]}"; do cp "${built[$p]}" "npm/$p/rloop.$p.node"; done

# The main package lists every platform package as an optional dependency; the repo's
# package.json lists only the host's (a workspace): npm refuses a workspace of another cpu, and
# `npm ci` one missing from the lock. So the main package is packed from a staging copy.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
npm pack --dry-run --json | node -e '
  const fs = require("node:fs"), path = require("node:path");
  const [stage, ...platforms] = process.argv.slice(1);
  for (const { path: f } of JSON.parse(fs.readFileSync(0, "utf8"))[0].files) {
    fs.mkdirSync(path.join(stage, path.dirname(f)), { recursive: true });
    fs.copyFileSync(f, path.join(stage, f));
  }
  const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
  delete pkg.workspaces;
  pkg.optionalDependencies = Object.fromEntries(platforms.map((p) => [require(`./npm/${p}/package.json`).name, pkg.version]));
  fs.writeFileSync(path.join(stage, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
' "$stage" "${all[@]}"
(cd "$stage" && npm pack --silent --pack-destination "$out") | sed "s|^|$out/|"
for p in "${platforms[@]}"; do
  (cd "npm/$p" && npm pack --silent --pack-destination "$out") | sed "s|^|$out/|"
done
