#!/usr/bin/env bash
# Measures `gsd-lane review` with N fake lanes that each take S seconds (a sleeping sh script):
# wall time with the default --jobs (all lanes at once) versus --jobs 1 (the reference's
# sequential run). Usage: bash examples/bench-review.sh [N] [S]   (default 4 2)
set -euo pipefail
n=${1:-4}
s=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${GSD_LANE_BIN:-}
if [ -z "$bin" ]; then
  cargo build --locked --release --quiet --manifest-path "$root/Cargo.toml" -p gsd-lane
  bin="$root/target/release/gsd-lane"
fi
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/gsd-lane-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GSD_HOME="$work/gsd-home"
mkdir -p "$work/bin" "$GSD_HOME/.gsd/capabilities"
flags=()
for i in $(seq 1 "$n"); do
  slug="sleeper$i"
  printf '#!/bin/sh\ncat >/dev/null\nsleep %s\nprintf "%s review after %s s\\n"\n' "$s" "$slug" "$s" > "$work/bin/$slug"
  chmod +x "$work/bin/$slug"
  mkdir -p "$GSD_HOME/.gsd/capabilities/$slug"
  sed -e "s/\"plan-stats\"/\"$slug\"/g" -e "s/--plan-stats/--$slug/" \
      -e "s/gsd-plan-stats/$slug/g" -e "s/Plan Stats/Sleeper $i/" \
      "$here/lanes/plan-stats/capability.json" > "$GSD_HOME/.gsd/capabilities/$slug/capability.json"
  flags+=("--$slug")
done
export PATH="$work/bin:$PATH"
cp -R "$here/sample-project" "$work/project"
mkdir -p "$work/project/.git"
cd "$work/project"
measure() {
  local start end
  start=$(date +%s%N)
  if ! "$bin" review --phase 3 "${flags[@]}" "$@" >/dev/null 2>"$work/stderr"; then
    cat "$work/stderr" >&2
    echo "bench: review failed" >&2
    exit 1
  fi
  end=$(date +%s%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'
}
default=$(measure)
sequential=$(measure --jobs 1)
echo "N=$n lanes, S=$s s each: default --jobs ${default} s; --jobs 1 ${sequential} s"
