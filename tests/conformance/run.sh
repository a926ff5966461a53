#!/usr/bin/env bash
# Conformance suite: gsd-lane's first-party lanes against the REAL CLIs.
#
#   bash tests/conformance/run.sh [--latest] [--jobs N] [--no-review] [--gsd-lane PATH] [lane...]
#
# Installs the CLIs pinned in tests/conformance/pins.txt from the npm registry into
# ${GSD_CONFORMANCE_CACHE:-$HOME/.cache/gsd-lane-conformance} (idempotent, cached),
# builds gsd-lane from this checkout, then runs every lane against loopback fake
# providers inside a network namespace (only `lo` exists) when the machine allows
# one, loopback-only configuration otherwise. Prints a per-lane table and a final
# line `N passed, M failed[, K skipped]`; exits non-zero when anything failed.
#
# --latest   install and try the newest releases instead of the pins, and report
#            which versions changed (drift), to catch a CLI moving under a lane early.
# --gsd-lane PATH   use this gsd-lane binary instead of building the checkout's.
# --jobs N   scenarios run side by side (default 2; GSD_CONFORMANCE_JOBS)
# --no-review  skip the multi-lane `gsd-lane review` scenario
# lane...    names to run (default: all): gemini claude codex opencode qwen kimi-code kimi-cli
#            cursor coderabbit antigravity (the last three on replay CLIs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${GSD_CONFORMANCE_CACHE:-$HOME/.cache/gsd-lane-conformance}
latest=0
jobs=${GSD_CONFORMANCE_JOBS:-2}
lanes=()
extra=()
gsd_lane=
while [ $# -gt 0 ]; do
  case $1 in
    --latest) latest=1 ;;
    --jobs) jobs=$2; shift ;;
    --no-review) extra+=(--no-review) ;;
    --gsd-lane) gsd_lane=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "conformance: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) lanes+=("$1") ;;
  esac
  shift
done
# Without npm/node the CLIs cannot be installed: install.py reports each one SKIPPED.
for tool in python3 cargo; do
  command -v "$tool" >/dev/null || { echo "conformance: $tool is required" >&2; exit 2; }
done
case $cache in
  "$root"|"$root"/*) echo "conformance: the cache $cache must be outside the checkout" >&2; exit 2 ;;
esac
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
mode=pins
[ "$latest" = 1 ] && mode=latest

# A work dir of this run's own: two runs side by side (two checkouts sharing the cache) must
# never remove each other's launchers, tool list, project, run dir or HOME. It is removed when
# the run ends.
work=$(mktemp -d "$cache/work-$mode.XXXXXX")
trap 'rm -rf "$work"' EXIT
tools="$work/tools.json"

# 1. Install (needs the registry, so outside the namespace).
install_args=(--cache "$cache" --pins "$here/pins.txt" --out "$tools" --bindir "$work/bin")
[ "$latest" = 1 ] && install_args+=(--latest)
python3 "$here/lib/install.py" "${install_args[@]}"
if [ "$latest" = 1 ]; then
  python3 - "$tools" <<'EOF'
import json, sys
tools = json.load(open(sys.argv[1]))["tools"]
print("conformance --latest: pinned -> newest")
for name, t in tools.items():
    if t.get("skipped") and t["version"] == t["pinned"]:
        change = "unknown (" + t["skipped"] + ")"
    else:
        change = "unchanged" if t["version"] == t["pinned"] else "CHANGED"
    print(f"  {name:10} {t['package']:28} {t['pinned']:>10} -> {t['version']:<10} {change}")
EOF
fi

# 2. Build gsd-lane from this checkout (unless --gsd-lane names a binary).
if [ -z "$gsd_lane" ]; then
  (cd "$root" && cargo build --quiet --locked -p gsd-lane -j "${CARGO_BUILD_JOBS:-2}")
  target=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  gsd_lane="$target/debug/gsd-lane"
fi
gsd_lane=$(cd "$(dirname "$gsd_lane")" && pwd)/$(basename "$gsd_lane")
[ -x "$gsd_lane" ] || { echo "conformance: no gsd-lane binary at $gsd_lane" >&2; exit 2; }

# 3. Run, isolated from every network but loopback where possible.
suite=(python3 "$here/lib/suite.py" --tools "$tools" --gsd-lane "$gsd_lane"
  --work "$work" --sample "$root/examples/sample-project" --jobs "$jobs" ${extra[@]+"${extra[@]}"})
if command -v unshare >/dev/null && command -v ip >/dev/null &&
   unshare -rn ip link set lo up 2>/dev/null; then
  unshare -rn sh -c 'ip link set lo up && exec "$@"' sh "${suite[@]}" \
    --isolation "network namespace (unshare -rn; only lo)" ${lanes[@]+"${lanes[@]}"}
else
  "${suite[@]}" --isolation "none available: loopback-only by configuration" ${lanes[@]+"${lanes[@]}"}
fi
