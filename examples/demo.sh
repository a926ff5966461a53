#!/usr/bin/env bash
# End-to-end review with no AI installed: installs the example lane (a shell script that reports
# plan statistics; not an AI) into a throw-away GSD home, copies the sample project, runs
# `gsd-lane review` on its phase 3 and prints where REVIEWS.md is.
#
#   bash examples/demo.sh            # builds gsd-lane (release) first, wherever cargo's target
#                                    # directory is (CARGO_TARGET_DIR, build.target-dir)
#   GSD_LANE_BIN=/path/to/gsd-lane bash examples/demo.sh   # use this binary, build nothing
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

# The binary lands in cargo's target directory, which CARGO_TARGET_DIR or `build.target-dir` in a
# cargo config may move: ask cargo where it is instead of assuming `target/`.
target_directory() {
  local metadata
  metadata=$(cargo metadata --format-version 1 --no-deps --locked --manifest-path "$root/Cargo.toml")
  if command -v python3 >/dev/null 2>&1; then
    printf '%s' "$metadata" | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
  else
    printf '%s' "$metadata" | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p'
  fi
}

bin=${GSD_LANE_BIN:-}
if [ -z "$bin" ]; then
  echo "demo: building gsd-lane (cargo build --release); a first build compiles every dependency" >&2
  echo "demo: and takes several minutes (about 7 on a 2-core machine); later runs take seconds." >&2
  cargo build --locked --release --manifest-path "$root/Cargo.toml" -p gsd-lane
  target=$(target_directory)
  if [ -z "$target" ]; then
    echo "demo: cannot find cargo's target directory (cargo metadata gave none); set GSD_LANE_BIN" >&2
    exit 1
  fi
  bin="$target/release/gsd-lane"
fi
if [ ! -x "$bin" ]; then
  echo "demo: no gsd-lane binary at $bin; set GSD_LANE_BIN=/path/to/gsd-lane" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gsd-lane-demo.XXXXXX")
export GSD_HOME="$work/gsd-home"

# Install the example lane into the global scope (active without a consent step). It ships its
# program (`"binary": "./bin/gsd-plan-stats"`), which gsd-lane resolves against the installed
# folder: nothing goes on PATH. `--yes` accepts the disclosure it prints.
"$bin" install --global --yes "$here/lanes/plan-stats" >&2

# A fresh copy of the sample GSD project (a git repository, so it is the repo root).
cp -R "$here/sample-project" "$work/project"
mkdir -p "$work/project/.git"
cd "$work/project"

echo "demo: GSD home $GSD_HOME, project $work/project" >&2
"$bin" list | grep -E 'plan-stats|^SCOPE|^scope' >&2 || true

# --plan-stats names the example lane explicitly, so no real AI CLI that happens to be
# installed is called. Drop it to review with every detected lane instead.
status=0
"$bin" review --phase 3 --plan-stats || status=$?

reviews="$work/project/.planning/phases/03-invoices/03-REVIEWS.md"
if [ -f "$reviews" ]; then
  echo
  echo "REVIEWS.md: $reviews"
fi
exit "$status"
