#!/usr/bin/env bash
# Installs one pinned tool into the conformance cache, idempotently.
#   install.sh <cache> <name> <kind> <package> <version>
# Prints the install prefix on success. A finished install is marked by a
# `.complete` file, so an interrupted install is redone, a finished one never.
set -euo pipefail
cache=$1 name=$2 kind=$3 pkg=$4 version=$5
safe=${pkg//\//+}
prefix="$cache/pkgs/$safe@$version"
if [[ -f $prefix/.complete ]]; then
  printf '%s\n' "$prefix"
  exit 0
fi
rm -rf "$prefix.partial"
mkdir -p "$prefix.partial"
log="$cache/logs/install-$name-$version.log"
mkdir -p "$cache/logs"
# Each install gets its own npm cache inside the conformance cache, so a
# machine's ~/.npm is neither used nor polluted.
if ! timeout 900 npm install --prefix "$prefix.partial" --no-audit --no-fund \
    --no-update-notifier --loglevel=error --cache "$cache/npm-cache" \
    "$pkg@$version" >"$log" 2>&1; then
  echo "npm install $pkg@$version failed: $(tail -n 3 "$log" | tr '\n' ' ')" >&2
  exit 1
fi
rm -rf "$prefix"
mv "$prefix.partial" "$prefix"
touch "$prefix/.complete"
printf '%s\n' "$prefix"
