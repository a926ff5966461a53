#!/usr/bin/env bash
# gsd-lane's HTTP lane path against real OpenAI-compatible server software: mockllm (PyPI,
# FastAPI + uvicorn), on 127.0.0.1 only. Self-contained: installs the pinned mockllm into a
# cache outside the checkout, starts it, runs an openai-http overlay lane through the real
# gsd-lane binary in a throw-away HOME/GSD_HOME, checks the review files, stops the server.
#
# Usage: bash tests/conformance/servers/mockllm.sh
#   GSD_LANE_BIN            the binary (default: target/debug/gsd-lane, built if missing)
#   GSD_CONFORMANCE_CACHE   install cache (default: $HOME/.cache/gsd-lane-conformance, as run.sh)
# Prints one line per check and "N passed, M failed"; exit 0 when all pass, 1 on a failure,
# 77 when mockllm cannot be installed here (skipped, never counted as passed).
#
# Why mockllm: it installs from PyPI in seconds with no model weights, and answers a canned
# text per prompt, so a marker in the prompt selects the shape under test. (LiteLLM's proxy
# pulls a large dependency tree; llama.cpp's server needs a build and a model.)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
VERSION=0.0.8
CACHE=${GSD_CONFORMANCE_CACHE:-$HOME/.cache/gsd-lane-conformance}
VENV=$CACHE/mockllm-$VERSION
BIN=${GSD_LANE_BIN:-$ROOT/target/debug/gsd-lane}

# A venv that no longer runs (moved, or its python gone) is made again, not trusted.
if ! "$VENV/bin/python3" -c 'import mockllm, uvicorn' >/dev/null 2>&1; then
  rm -rf "$VENV"
  mkdir -p "$CACHE"
  if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "mockllm==$VERSION"; } >/dev/null 2>&1; then
    echo "mockllm: skipped (pip install mockllm==$VERSION failed)"
    exit 77
  fi
fi
if [ ! -x "$BIN" ]; then
  (cd "$ROOT" && cargo build -q -p gsd-lane) || exit 1
fi

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

THINK_PROMPT="Review PLAN-THINK."
PLAIN_PROMPT="Review PLAN-PLAIN."
cat >"$WORK/responses.yml" <<YAML
responses:
  "$THINK_PROMPT": "<think>The user wants a review; weigh step 2.</think>\n\nCONFORMANCE-THINK-OK: step 2 lacks a rollback (PLAN.md:2)."
  "$PLAIN_PROMPT": "CONFORMANCE-PLAIN-OK (PLAN.md:1)"
defaults:
  unknown_response: "CONFORMANCE-DEFAULT"
YAML

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
MOCKLLM_RESPONSES_FILE="$WORK/responses.yml" "$VENV/bin/python3" -m uvicorn mockllm.server:app \
  --host 127.0.0.1 --port "$PORT" --log-level warning >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
up=0
for _ in $(seq 1 300); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1',$PORT),0.2)" 2>/dev/null && { up=1; break; }
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ "$up" != 1 ]; then
  echo "mockllm: the server did not start on 127.0.0.1:$PORT:"
  sed -n '1,20p' "$WORK/server.log"
  echo "mockllm $VERSION: 0 passed, 1 failed"
  exit 1
fi

# An openai-http overlay lane for mockllm: it serves /models (not /v1/models), so the probe
# uses that and the model is configured (no discovery).
export HOME="$WORK/home" GSD_HOME="$WORK/gsd-home"
mkdir -p "$HOME" "$GSD_HOME/.gsd/capabilities/mockllm-review" "$WORK/project/.planning" "$WORK/run"
python3 - "$ROOT/tests/fixtures/run/http/acme-review/capability.json" \
  "$GSD_HOME/.gsd/capabilities/mockllm-review/capability.json" <<'PY'
import json, sys
lane = json.load(open(sys.argv[1]))
lane["id"] = "mockllm-review"
lane["reviewer"]["probe"]["path"] = "/models"
lane["reviewer"]["invoke"]["modelDiscovery"] = "none"
json.dump(lane, open(sys.argv[2], "w"), indent=2)
PY
cat >"$WORK/project/.planning/config.json" <<JSON
{"review": {"acme_host": "http://127.0.0.1:$PORT", "models": {"acme_local": "gpt-4"}}}
JSON

PASSED=0
FAILED=0
check() { # name, condition-exit-status
  if [ "$2" -eq 0 ]; then PASSED=$((PASSED + 1)); echo "ok    $1"; else FAILED=$((FAILED + 1)); echo "FAIL  $1"; fi
}
run_lane() { # prompt -> prints --json result; review in $WORK/run/gsd-review-acme_local.md
  printf '%s' "$1" >"$WORK/run/gsd-review-prompt.md"
  (cd "$WORK/project" && "$BIN" run acme_local --run-dir "$WORK/run" --json 2>"$WORK/stderr.txt")
}
REVIEW="$WORK/run/gsd-review-acme_local.md"
# The answers cite `PLAN.md:<line>`: a source-grounded review citing no file:line would be
# stamped (upstream #3436) and no longer be the server's answer byte for byte.
result_is() { # json, stubbed (true|false), model source -> exit status
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
got = json.loads(sys.argv[1])
ok = (got.get("slug") == "acme_local" and got.get("ok") is True
      and got.get("stubbed") is (sys.argv[2] == "true")
      and got.get("model") == {"value": "gpt-4", "source": sys.argv[3]}
      and isinstance(got.get("sandbox"), dict))
sys.exit(0 if ok else 1)
PY
}

out=$(run_lane "$PLAIN_PROMPT")
result_is "$out" false served; check "plain answer is a review, the served model recorded ($out)" $?
[ "$(cat "$REVIEW")" = "CONFORMANCE-PLAIN-OK (PLAN.md:1)" ]; check "review file is the server's answer" $?

out=$(run_lane "$THINK_PROMPT")
result_is "$out" false served; check "think answer is a review ($out)" $?
[ "$(head -n 1 "$REVIEW")" = "CONFORMANCE-THINK-OK: step 2 lacks a rollback (PLAN.md:2)." ]; check "reasoning taken out of the review body" $?
grep -q '^<details>' "$REVIEW" && grep -q 'weigh step 2' "$REVIEW"; check "reasoning kept, collapsed, after the review" $?

# A route the server does not have: FastAPI's own 404 must come back as a stub that names the
# status on its own line, then the body verbatim.
python3 - "$GSD_HOME/.gsd/capabilities/mockllm-review/capability.json" <<'PY'
import json, sys
path = sys.argv[1]; lane = json.load(open(path))
lane["reviewer"]["invoke"]["path"] = "/v1/no-such-route"
json.dump(lane, open(path, "w"), indent=2)
PY
out=$(run_lane "$PLAIN_PROMPT")
result_is "$out" true requested; check "404 is a stub, the requested model recorded ($out)" $?
grep -qx 'HTTP 404' "$REVIEW" && grep -q '"detail"' "$REVIEW"; check "stub names HTTP 404 on its own line, then the body" $?

echo "mockllm $VERSION: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
