#!/usr/bin/env bash
# The npm packages, end to end (CI runs this from .ci/run):
#   - pack.sh writes a launcher and this machine's binary package, neither with any script;
#   - both install offline: npm install -g --offline --ignore-scripts --prefix <empty dir>;
#   - the installed gsd-lane runs --version and a real review (the demo's plan-stats lane);
#   - without the platform package: one clear error naming it and GSD_LANE_BIN;
#   - GSD_LANE_BIN overrides the binary; argv, stdin, exit status and signals pass through;
#   - the release workflow builds exactly the platforms the launcher knows.
#
#   GSD_LANE_BIN=/path/to/gsd-lane bash packaging/npm/test.sh   # package this binary
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gsd-lane-npm-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0

pass() { echo "npm-test: ok   $*"; }
fail() {
  echo "npm-test: FAIL $*" >&2
  failures=$((failures + 1))
}

# A private npm: no user config, an empty cache, no registry reachable.
export npm_config_userconfig="$work/npmrc" npm_config_cache="$work/cache"
export npm_config_registry="http://127.0.0.1:9/" npm_config_audit=false npm_config_fund=false
export npm_config_update_notifier=false
: >"$work/npmrc"

GSD_NPM_OUT="$work/out" bash "$here/pack.sh"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$root/Cargo.toml")
platform=$(node -e 'process.stdout.write(require(process.argv[1]).candidates()[0].key)' "$here/launcher/lib/platforms.js")
launcher="$work/out/gsd-lane-cli-$version.tgz"
binary_pkg="$work/out/gsd-lane-cli-$platform-$version.tgz"
[ -f "$launcher" ] && [ -f "$binary_pkg" ] || { echo "npm-test: pack.sh wrote no tarballs" >&2; exit 1; }

# No package carries a script of any kind, and the binary is executable in the tarball.
for tgz in "$launcher" "$binary_pkg"; do
  if tar -xOzf "$tgz" package/package.json | node -e '
      let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
        const m = JSON.parse(s);
        process.exit(m.scripts === undefined && m.gypfile === undefined ? 0 : 1);
      });'; then
    pass "$(basename "$tgz"): no scripts"
  else
    fail "$(basename "$tgz") declares scripts"
  fi
done
if tar -tvzf "$binary_pkg" | grep -E '^-rwx.* package/bin/gsd-lane(\.exe)?$' >/dev/null; then
  pass "the binary is executable in its tarball"
else
  fail "the binary is not executable in its tarball: $(tar -tvzf "$binary_pkg")"
fi
if tar -xOzf "$launcher" package/package.json | node -e '
    const { PLATFORMS, packageName } = require(process.argv[1]);
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const deps = JSON.parse(s).optionalDependencies || {};
      const want = Object.fromEntries(PLATFORMS.map((p) => [packageName(p.key), process.argv[2]]));
      process.exit(JSON.stringify(deps) === JSON.stringify(want) ? 0 : 1);
    });' "$here/launcher/lib/platforms.js" "$version"; then
  pass "optionalDependencies: every platform, pinned to $version"
else
  fail "optionalDependencies do not list every platform at $version"
fi

# The release workflow's matrix builds the same targets the launcher looks for.
wanted=$(node -e 'for (const p of require(process.argv[1]).PLATFORMS) console.log(p.key + " " + p.target)' "$here/launcher/lib/platforms.js" | sort)
built=$(sed -n 's/^ *- *{ *npm: *\([a-z0-9-]*\), *target: *\([a-z0-9_-]*\).*/\1 \2/p' "$root/.github/workflows/release.yml" | sort)
if [ "$wanted" = "$built" ]; then
  pass "release.yml builds every platform the launcher knows"
else
  fail "release.yml's matrix differs from platforms.js: wanted
$wanted
built
$built"
fi

# 1. Both tarballs, offline, no scripts, into an empty prefix.
full="$work/full"
mkdir -p "$full"
npm install -g --offline --ignore-scripts --prefix "$full" "$launcher" "$binary_pkg" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; echo "npm-test: offline install failed" >&2; exit 1; }
gsd="$full/bin/gsd-lane"
said=$(env -u GSD_LANE_BIN "$gsd" --version)
case "$said" in
  "gsd-lane $version" | "gsd-lane $version "*) pass "installed gsd-lane --version: $said" ;;
  *) fail "--version said: $said" ;;
esac

# A real review through the installed command: the demo's steps (install the plan-stats lane,
# review the sample project's phase 3), each through the launcher.
review() {
  export GSD_HOME="$work/gsd-home"
  unset GSD_LANE_BIN
  "$gsd" install --global --yes "$root/examples/lanes/plan-stats" &&
    cp -R "$root/examples/sample-project" "$work/project" &&
    mkdir -p "$work/project/.git" &&
    cd "$work/project" &&
    "$gsd" review --phase 3 --plan-stats
}
reviews="$work/project/.planning/phases/03-invoices/03-REVIEWS.md"
if (review) >"$work/review.log" 2>&1 && grep -q '^## Plan Stats Review' "$reviews"; then
  pass "a real review (the demo's plan-stats lane) through the installed gsd-lane"
else
  cat "$work/review.log" >&2
  fail "the review through the installed gsd-lane"
fi
status=0
GSD_LANE_BIN="$gsd" "$gsd" --version 2>"$work/self.err" || status=$?
if [ "$status" = 1 ] && grep -q 'is this npm launcher' "$work/self.err"; then
  pass "GSD_LANE_BIN naming the launcher itself: refused, not a loop"
else
  fail "GSD_LANE_BIN=launcher: status $status $(cat "$work/self.err")"
fi

# 2. The launcher alone: the platform package is missing.
bare="$work/bare"
mkdir -p "$bare"
npm install -g --offline --ignore-scripts --prefix "$bare" "$launcher" >"$work/install-bare.log" 2>&1 ||
  { cat "$work/install-bare.log" >&2; echo "npm-test: launcher-only install failed" >&2; exit 1; }
lone="$bare/bin/gsd-lane"
status=0
message=$(env -u GSD_LANE_BIN "$lone" --version 2>&1 >/dev/null) || status=$?
if [ "$status" = 1 ] && [ "$(printf '%s\n' "$message" | wc -l)" = 1 ] &&
  [[ "$message" == *"@gsd-lane/cli-$platform@$version"* ]] && [[ "$message" == *GSD_LANE_BIN* ]]; then
  pass "missing platform package: exit 1, one line naming @gsd-lane/cli-$platform and GSD_LANE_BIN"
else
  fail "missing platform package: status $status, message: $message"
fi

# 3. GSD_LANE_BIN: argv, stdin, stdout and the exit status of the program it names.
fake="$work/fake-gsd-lane"
cat >"$fake" <<'SH'
#!/bin/sh
case "$1" in
  echo) shift; for a in "$@"; do printf '[%s]' "$a"; done; printf '\n'; cat; exit 0 ;;
  exit) exit "$2" ;;
  die) kill -TERM $$; sleep 5; exit 0 ;;
  wait) trap 'echo got-term > "$2"; exit 3' TERM; echo ready > "$3"; while :; do sleep 0.1; done ;;
esac
exit 64
SH
chmod +x "$fake"
got=$(printf 'from stdin\n' | GSD_LANE_BIN="$fake" "$lone" echo 'a b' '' "c'd")
if [ "$got" = "[a b][][c'd]
from stdin" ]; then pass "GSD_LANE_BIN runs that program with the same argv and stdin"; else fail "override/argv/stdin: $got"; fi
status=0
GSD_LANE_BIN="$fake" "$lone" exit 7 || status=$?
if [ "$status" = 7 ]; then pass "exit status 7 passes through"; else fail "exit status: $status"; fi
status=0
GSD_LANE_BIN="$work/no-such-binary" "$lone" --version 2>"$work/nosuch.err" || status=$?
if [ "$status" = 1 ] && grep -q 'cannot run' "$work/nosuch.err"; then pass "a GSD_LANE_BIN that cannot run: exit 1 with the reason"; else fail "missing GSD_LANE_BIN: $status $(cat "$work/nosuch.err")"; fi

# 4. Signals: the child killed by SIGTERM kills the launcher with SIGTERM; a SIGTERM sent to
# the launcher reaches the child.
died=$(GSD_LANE_BIN="$fake" node -e '
  const r = require("child_process").spawnSync(process.argv[1], ["die"], { stdio: "inherit" });
  process.stdout.write(String(r.signal));' "$lone")
if [ "$died" = SIGTERM ]; then pass "a child killed by SIGTERM: the launcher dies of SIGTERM"; else fail "child signal: launcher ended with signal $died"; fi
forwarded=$(GSD_LANE_BIN="$fake" node -e '
  const fs = require("fs");
  const [launcher, mark, ready] = process.argv.slice(1);
  const child = require("child_process").spawn(launcher, ["wait", mark, ready], { stdio: "inherit" });
  const poll = setInterval(() => { if (fs.existsSync(ready)) { clearInterval(poll); child.kill("SIGTERM"); } }, 50);
  const stop = setTimeout(() => child.kill("SIGKILL"), 20000);
  child.on("exit", (code, signal) => { clearTimeout(stop); process.stdout.write(`${code} ${signal} ${fs.existsSync(mark) ? fs.readFileSync(mark, "utf8").trim() : "-"}`); });
' "$lone" "$work/term.mark" "$work/ready.mark")
if [ "$forwarded" = "3 null got-term" ]; then pass "SIGTERM to the launcher reaches gsd-lane, whose exit status 3 comes back"; else fail "forwarding: $forwarded"; fi

if [ "$failures" != 0 ]; then
  echo "npm-test: $failures failed" >&2
  exit 1
fi
echo "npm-test: all passed (packages: @gsd-lane/cli and @gsd-lane/cli-$platform $version)"
