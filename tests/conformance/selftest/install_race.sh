#!/usr/bin/env bash
# Self-test of lib/install.py's cache (no network, a few seconds): a fake `npm` installs a tiny
# fake package slowly into a temporary cache.
#   1. two installs started at once: npm runs once, both runs get the complete package, and no
#      `.partial` dir is left;
#   2. an install killed (SIGKILL) while npm runs: its package is not mistaken for a complete
#      one, and the next run installs it cleanly.
# Exits 0 when every check passes, 1 naming the first that failed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gsd-install-race.XXXXXX")
pids=()
cleanup() {
  for pid in ${pids[@]+"${pids[@]}"}; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "install_race: FAIL: $*" >&2; exit 1; }

# The fake npm: `npm install --prefix DIR ... fakepkg@1.0.0` writes the package in two halves
# with a pause between them, and counts its runs.
mkdir -p "$tmp/bin"
cat > "$tmp/bin/npm" <<'NPM'
#!/bin/sh
prefix=
while [ $# -gt 0 ]; do
  [ "$1" = --prefix ] && { prefix=$2; shift; }
  shift
done
echo "$$" >> "$FAKE_NPM_COUNT"
pkg="$prefix/node_modules/fakepkg"
mkdir -p "$pkg/bin"
printf '#!/bin/sh\necho fake\n' > "$pkg/bin/fake"
chmod +x "$pkg/bin/fake"
sleep "${FAKE_NPM_SLEEP:-1}"
printf '{"name":"fakepkg","version":"1.0.0","bin":{"fake":"bin/fake"}}\n' > "$pkg/package.json"
NPM
chmod +x "$tmp/bin/npm"
printf 'fake npm fakepkg 1.0.0\n' > "$tmp/pins.txt"
export PATH="$tmp/bin:$PATH" FAKE_NPM_COUNT="$tmp/npm-runs"

install() { # install <cache> <n>: one run of install.py, its output in $tmp/out-<n>.*
  python3 "$here/lib/install.py" --cache "$1" --pins "$tmp/pins.txt" \
    --out "$tmp/out-$2.json" --bindir "$tmp/bin-$2" fake 2>"$tmp/out-$2.err"
}
installed() { # installed <n>: the run's tool list has fakepkg 1.0.0 with its launcher
  python3 - "$tmp/out-$1.json" <<'PY'
import json, os, sys
tool = json.load(open(sys.argv[1]))["tools"]["fake"]
assert "skipped" not in tool, tool
assert tool["version"] == "1.0.0", tool
assert os.access(tool["launchers"]["fake"], os.X_OK), tool
PY
}
runs() { wc -l < "$FAKE_NPM_COUNT" 2>/dev/null | tr -d ' ' || echo 0; }

# 1. Two installs at once.
cache="$tmp/cache1"
: > "$FAKE_NPM_COUNT"
install "$cache" a & a=$!; pids+=("$a")
install "$cache" b & b=$!; pids+=("$b")
wait "$a" || fail "run a failed: $(cat "$tmp/out-a.err")"
wait "$b" || fail "run b failed: $(cat "$tmp/out-b.err")"
installed a || fail "run a did not get the complete package"
installed b || fail "run b did not get the complete package"
[ "$(runs)" = 1 ] || fail "npm ran $(runs) times for one package (the second run must wait and reuse it)"
[ -f "$cache/pkgs/fakepkg@1.0.0/.complete" ] || fail "no complete prefix"
[ -f "$cache/pkgs/fakepkg@1.0.0/node_modules/fakepkg/package.json" ] || fail "the prefix lacks package.json"
leftover=$(find "$cache/pkgs" -maxdepth 1 -name '*.partial*' | head -1)
[ -z "$leftover" ] || fail "a partial install was left: $leftover"

# 2. An install killed while npm runs.
cache="$tmp/cache2"
: > "$FAKE_NPM_COUNT"
FAKE_NPM_SLEEP=30 python3 "$here/lib/install.py" --cache "$cache" --pins "$tmp/pins.txt" \
  --out "$tmp/out-k.json" --bindir "$tmp/bin-k" fake 2>"$tmp/out-k.err" & k=$!; pids+=("$k")
for _ in $(seq 100); do [ "$(runs)" = 1 ] && break; sleep 0.1; done
[ "$(runs)" = 1 ] || fail "the install to kill never started npm"
npm_pid=$(head -1 "$FAKE_NPM_COUNT")
pids+=("$npm_pid")
# As a Ctrl-C of the whole run would: the installer and its npm die mid-install.
kill -9 "$k"; wait "$k" 2>/dev/null || true
pkill -9 -P "$npm_pid" 2>/dev/null || true
kill -9 "$npm_pid" 2>/dev/null || true
[ ! -e "$cache/pkgs/fakepkg@1.0.0/.complete" ] || fail "a killed install is marked complete"
install "$cache" c || fail "the run after a killed one failed: $(cat "$tmp/out-c.err")"
installed c || fail "the run after a killed one did not get the complete package"
[ "$(runs)" = 2 ] || fail "the killed install was reused instead of redone (npm ran $(runs) times)"
leftover=$(find "$cache/pkgs" -maxdepth 1 -name '*.partial*' | head -1)
[ -z "$leftover" ] || fail "the killed run's partial install was left: $leftover"
echo "install_race: ok (two installs at once share one; a killed install is redone)"
