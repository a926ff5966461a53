#!/usr/bin/env bash
# Builds gsd-lane's npm packages into target/npm/ (or $GSD_NPM_OUT):
#   gsd-lane-cli-<version>.tgz                    the launcher, @gsd-lane/cli (bin `gsd-lane`)
#   gsd-lane-cli-<platform>-<version>.tgz         the binary of one platform, @gsd-lane/cli-<platform>
#
#   bash packaging/npm/pack.sh                                # release build of this machine
#   GSD_LANE_BIN=/path/to/gsd-lane bash packaging/npm/pack.sh # package this binary, build nothing
#   GSD_NPM_PLATFORM=linux-arm64-musl GSD_LANE_BIN=... bash packaging/npm/pack.sh
#                                       # another platform's binary (the release workflow)
#
# No package has an install script: the binary is in the tarball.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${GSD_NPM_OUT:-$root/target/npm}

die() {
  echo "pack: $*" >&2
  exit 1
}

command -v node >/dev/null || die "node is required (it writes the package.json files)"
command -v npm >/dev/null || die "npm is required (npm pack)"

# The version every package carries: the workspace's.
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$root/Cargo.toml")
[ -n "$version" ] || die "no [workspace.package] version in $root/Cargo.toml"

# This machine's platform key, unless one is given.
native=$(node -e '
  const { candidates } = require(process.argv[1]);
  const found = candidates();
  process.stdout.write(found.length ? found[0].key : "");
' "$here/launcher/lib/platforms.js")
platform=${GSD_NPM_PLATFORM:-$native}
[ -n "$platform" ] || die "this machine ($(node -p 'process.platform + " " + process.arch')) is not a supported platform; set GSD_NPM_PLATFORM"
exe=gsd-lane
case "$platform" in win32-*) exe=gsd-lane.exe ;; esac

bin=${GSD_LANE_BIN:-}
if [ -z "$bin" ]; then
  [ "$platform" = "$native" ] || die "GSD_NPM_PLATFORM=$platform is not this machine's ($native): give its binary in GSD_LANE_BIN"
  echo "pack: building gsd-lane (cargo build --release --locked)" >&2
  cargo build --locked --release --manifest-path "$root/Cargo.toml" -p gsd-lane
  target=$(cargo metadata --format-version 1 --no-deps --locked --manifest-path "$root/Cargo.toml" |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.parse(s).target_directory));')
  bin="$target/release/gsd-lane"
fi
[ -f "$bin" ] || die "no gsd-lane binary at $bin"
if [ "$platform" = "$native" ]; then
  # The binary must be the version the packages say.
  said=$("$bin" --version) || die "$bin --version failed"
  # `gsd-lane <version>`, then the vocabulary it speaks in parentheses.
  case "$said" in
    "gsd-lane $version" | "gsd-lane $version "*) ;;
    *) die "$bin says \"$said\", the workspace is $version" ;;
  esac
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/gsd-lane-npm.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"

# The launcher.
mkdir -p "$stage/cli/bin" "$stage/cli/lib"
cp "$here/launcher/bin/gsd-lane.js" "$stage/cli/bin/"
cp "$here/launcher/lib/platforms.js" "$stage/cli/lib/"
chmod 0755 "$stage/cli/bin/gsd-lane.js"
cp "$here/README.md" "$stage/cli/README.md"
node "$here/manifest.js" launcher "$version" "$stage/cli"

# The platform's binary.
pkg="$stage/cli-$platform"
mkdir -p "$pkg/bin"
cp "$bin" "$pkg/bin/$exe"
chmod 0755 "$pkg/bin/$exe"
printf '# @gsd-lane/cli-%s\n\nThe gsd-lane %s binary for %s. Install `@gsd-lane/cli`, which picks it.\n' \
  "$platform" "$version" "$platform" >"$pkg/README.md"
node "$here/manifest.js" platform "$platform" "$version" "$pkg"

for dir in "$stage/cli" "$pkg"; do
  (cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
done
echo "pack: wrote $out/gsd-lane-cli-$version.tgz and $out/gsd-lane-cli-$platform-$version.tgz" >&2
