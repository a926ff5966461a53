#!/usr/bin/env bash
# End-to-end review with no AI installed: installs the example lane (a shell script that reports
# plan statistics; not an AI) into a throw-away GSD home, copies the sample project, runs
# `gsd-lane review` on its phase 3 and prints where REVIEWS.md is.
#
#   bash examples/demo.sh            # builds gsd-lane (release) first
#   GSD_LANE_BIN=/path/to/gsd-lane bash examples/demo.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

bin=${GSD_LANE_BIN:-}
if [ -z "$bin" ]; then
  echo "demo: building gsd-lane (cargo build --release)..." >&2
  cargo build --locked --release --quiet --manifest-path "$root/Cargo.toml" -p gsd-lane
  bin="$root/target/release/gsd-lane"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gsd-lane-demo.XXXXXX")
export GSD_HOME="$work/gsd-home"

# Install the example lane: a plain copy into the global overlay directory (global scope is
# active without a consent step). Its script goes on PATH, where the lane's probe looks for it.
mkdir -p "$GSD_HOME/.gsd/capabilities"
cp -R "$here/lanes/plan-stats" "$GSD_HOME/.gsd/capabilities/plan-stats"
export PATH="$GSD_HOME/.gsd/capabilities/plan-stats/bin:$PATH"

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
