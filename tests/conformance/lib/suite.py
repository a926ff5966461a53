"""Runs gsd-lane's first-party spawn lanes against the installed real CLIs.

Called by run.sh inside a network namespace (only loopback exists) when the machine
allows it. For every lane and scenario: a fresh throw-away HOME, a fake provider on
127.0.0.1 whose answer carries a unique marker, the CLI's config pointing at it, then
`gsd-lane run <slug> --json`; at the end one multi-lane `gsd-lane review`.

Assertions per scenario (each failure names the check):
  argv      the CLI accepted gsd-lane's argv (no usage error in the .err sidecar)
  ran       `run --json` says ok and not stubbed
  marker    text from the plan reached the provider (for lanes that get the prompt as a
            file path: that path, since the CLI's model is what would read the file)
  exact     the review file equals the provider's answer byte for byte, after the one
            normalization gsd-lane documents (a final "\\n" is appended when missing,
            invocation.md §10)
  model     with `--model`, the requested model reached the provider
  clean     no control bytes in REVIEWS.md (the run dir keeps the raw bytes)
  tool      (scenario `narrated`, opencode's) the CLI ran the `read` tool the model called on
            the plan file and sent its result back: the file's marker came in a `tool` message
  final     (the same scenario) the review is the final answer, without the narration the model
            said before its tool call (issue 21 item 4); in the multi-lane review too
  renamed   (cursor's scenario `renamed`) with only the vendor's new program name on PATH
            (`agent`, not `cursor-agent`), the lane still runs and its review is exact
  verdict   REVIEWS.md has the panel verdict at its top, and `gsd-lane verdict --json`
            recomputes it with outcome `review` for every lane that ran
"""

import concurrent.futures
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import lanes as lanedefs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROVIDER = os.path.join(ROOT, "providers", "fake_provider.py")
REPLAY_BIN = os.path.join(ROOT, "replay", "bin")
# The replay CLIs under their vendors' new names only (`agent`, Cursor's rename of cursor-agent):
# on PATH instead of REPLAY_BIN in a lane's `renamed` scenario.
RENAMED_BIN = os.path.join(ROOT, "replay", "renamed")
RUN_TIMEOUT = 240
USAGE_ERRORS = re.compile(
    r"unknown (option|argument|flag)|unrecognized (option|argument)|unexpected argument"
    r"|invalid (option|choice|value)|Usage: |error: .*argument|Not enough arguments",
    re.IGNORECASE)
# C0 controls other than tab and newline, DEL, C1 controls, bidi overrides/isolates.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]")


def answer_for(slug, nonce):
    """The fixed review a provider answers with (no trailing newline, like a model)."""
    # One line is longer than 80 columns, so a CLI that re-wraps its output is caught.
    # It cites the plan as `<path>:<line>`, as a source-grounded review must: gsd-lane stamps a
    # review citing no file:line (upstream #3436), and `exact` compares the bytes.
    return (f"## Summary\n\nREVIEW-MARKER-{slug}-{nonce}: the plan is sound.\n\n"
            f"- Totals in integer cents avoid rounding drift "
            f"(.planning/phases/03-invoices/03-01-PLAN.md:1).\n"
            f"- `next_invoice_number` must be atomic per year: two concurrent POST /invoices "
            f"requests in the same year must never receive the same number, so take the "
            f"ledger lock before reading the last number.")


class Provider:
    """A running fake provider process and its request log."""

    def __init__(self, workdir, answer, lifetime=900, read_path=None):
        os.makedirs(workdir, exist_ok=True)
        self.review_file = os.path.join(workdir, "provider-answer.md")
        self.log = os.path.join(workdir, "provider-requests.jsonl")
        port_file = os.path.join(workdir, "provider.port")
        with open(self.review_file, "w", encoding="utf-8") as f:
            f.write(answer)
        self.proc = subprocess.Popen(
            [sys.executable, PROVIDER, "--review-file", self.review_file, "--log", self.log,
             "--port-file", port_file, "--model", lanedefs.DEFAULT_MODEL,
             "--lifetime", str(lifetime)]
            + (["--narrate-then-read", read_path] if read_path else []),
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "provider.stderr"), "w"))
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        with open(port_file) as f:
            self.url = f"http://127.0.0.1:{f.read().strip()}"

    def requests_text(self):
        try:
            with open(self.log, encoding="utf-8") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class Result:
    """One row of the final table."""

    def __init__(self, lane, version, source, scenario):
        self.lane, self.version, self.source, self.scenario = lane, version, source, scenario
        self.status = "PASS"
        self.detail = ""
        self.failures = []

    def fail(self, check, detail):
        self.failures.append(f"{check}: {detail}")
        self.status = "FAIL"

    def skip(self, reason):
        self.status, self.detail = "SKIP", reason


class Suite:
    """State shared by every scenario of one suite run."""

    def __init__(self, tools, gsd_lane, workroot, sample):
        self.tools = tools
        self.gsd_lane = gsd_lane
        self.workroot = workroot
        self.sample = sample

    def tool_version(self, lane):
        if lane.tool == "replay":
            return "replay"
        entry = self.tools["tools"].get(lane.tool)
        return entry["version"] if entry else "?"

    def skip_reason(self, lane):
        if lane.tool == "replay":
            return None
        entry = self.tools["tools"].get(lane.tool)
        if entry is None:
            return f"{lane.tool} is not in pins.txt"
        return entry.get("skipped")

    def path(self, lane=None, renamed=False):
        """PATH for a lane: its tool's own bin dir first; with `renamed`, the replays under
        their new names only, so the old name is nowhere on it."""
        first = []
        entry = self.tools["tools"].get(lane.tool) if lane else None
        if entry and entry.get("bindir"):
            first.append(entry["bindir"])
        replays = RENAMED_BIN if renamed else REPLAY_BIN
        return ":".join(first + [self.tools["bindir"], replays, "/usr/local/bin", "/usr/bin",
                                 "/bin"])

    def base_env(self, home, lane=None):
        env = {"PATH": self.path(lane), "HOME": home, "GSD_HOME": home, "LANG": "C.UTF-8",
               "XDG_CONFIG_HOME": f"{home}/.config", "XDG_CACHE_HOME": f"{home}/.cache",
               "XDG_DATA_HOME": f"{home}/.local/share", "XDG_STATE_HOME": f"{home}/.local/state",
               "TMPDIR": f"{home}/tmp"}
        os.makedirs(env["TMPDIR"], exist_ok=True)
        # The HOME stays as fresh as a new machine's: no state directory is made here, so each
        # CLI's first run creates its own (~/.local, ~/.qwen, ~/.gemini, ...) under `enforce`,
        # which the read-only view allows (README "Trust model"). Under the Landlock fallback a
        # new entry directly in $HOME is refused, and those first runs fail there.
        env.update(lanedefs.common_env())
        return env

    def install_overlays(self, lanes, env):
        """`gsd-lane install <folder> --yes` (global) of each lane's example overlay, as a user
        would; an install that fails raises with gsd-lane's output."""
        root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
        for lane in lanes:
            if not lane.overlay:
                continue
            proc = subprocess.run([self.gsd_lane, "install", os.path.join(root, lane.overlay),
                                   "--yes"], env=env, capture_output=True, timeout=60,
                                  stdin=subprocess.DEVNULL)
            if proc.returncode != 0:
                raise RuntimeError(f"gsd-lane install {lane.overlay} failed: "
                                   f"{proc.stdout[-300:]!r} {proc.stderr[-300:]!r}")

    def project(self, where, config):
        """A fresh copy of the sample project (a git repository root) with a config."""
        shutil.copytree(self.sample, where)
        os.makedirs(os.path.join(where, ".git"), exist_ok=True)
        with open(os.path.join(where, ".planning", "config.json"), "w") as f:
            json.dump(config, f)
        return where


def effort_values(log_text):
    """Every value of an "effort" key anywhere in the JSON request bodies of a log."""
    found = set()

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "effort" and isinstance(value, str):
                    found.add(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for line in log_text.splitlines():
        try:
            walk(json.loads(json.loads(line)["body"]))
        except (ValueError, KeyError, TypeError):
            continue
    return found


def missing_lines(reviews, answer):
    """The first line of the answer that is not a whole line of REVIEWS.md, or None.

    Headings may be demoted (more `#`), as review-workflow nests a review's own headings
    under its reviewer's heading; every other line must appear exactly, so a CLI that
    decorates or indents the review is caught.
    """
    lines = set(reviews.splitlines())
    for line in answer.splitlines():
        if not line.strip():
            continue
        heading = re.match(r"^(#+) (.*)$", line)
        if heading:
            pattern = re.compile(r"^#+ " + re.escape(heading.group(2)) + "$", re.MULTILINE)
            if not pattern.search(reviews):
                return line
        elif line not in lines:
            return line
    return None


# The plan file the narrating model asks the CLI to read, relative to the project (the lane's
# working directory).
PLAN_FILE = os.path.join(".planning", "phases", "03-invoices", "03-01-PLAN.md")
# What the fake provider's narrating model says before its tool call (providers/fake_provider.py).
NARRATION = "I will read the plan file first."


def tool_results(log_text):
    """The text of every `tool` role message in the chat requests of a provider log."""
    found = []
    for line in log_text.splitlines():
        try:
            messages = json.loads(json.loads(line)["body"]).get("messages") or []
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict) and message.get("role") == "tool":
                found.append(json.dumps(message.get("content"), ensure_ascii=False))
    return found


def check_narrated(result, seen, review_path, file_marker):
    """The `narrated` scenario: the tool ran on the plan file, and the review is the final
    answer only, not the narration before the tool call."""
    results = tool_results(seen)
    if not results:
        result.fail("tool", "no tool result came back to the provider: the CLI never ran the "
                    "`read` call (or the provider never offered one)")
    elif not any(file_marker in r for r in results):
        result.fail("tool", f"the `read` result never carried the plan file's marker "
                    f"{file_marker!r}: {results[0][:200]!r}")
    try:
        with open(review_path, encoding="utf-8", errors="replace") as f:
            review = f.read()
    except OSError:
        return  # `exact` names the missing file
    if NARRATION in review:
        result.fail("final", f"the narration before the tool call is in the review: "
                    f"{review[:160]!r}")


def check_review(result, review_path, answer, label="exact"):
    try:
        with open(review_path, "rb") as f:
            got = f.read()
    except OSError as err:
        result.fail(label, f"no review file: {err}")
        return
    want = answer.encode() + (b"" if answer.endswith("\n") else b"\n")
    if got != want:
        result.fail(label, f"review file differs from the provider's answer: got {got[:160]!r}")


def run_scenario(suite, lane, scenario, effort=None):
    """One `gsd-lane run <slug>` against a fresh provider; returns a Result."""
    trusted = lane.slug == "gemini" and scenario != "default"
    result = Result(lane.label, suite.tool_version(lane),
                    "replay" if lane.tool == "replay" else "real",
                    scenario + (" [trusted folder]" if trusted and scenario != "trusted" else ""))
    reason = suite.skip_reason(lane)
    if reason:
        result.skip(reason)
        return result
    nonce = secrets.token_hex(4)
    work = os.path.join(suite.workroot, lane.label, scenario)
    shutil.rmtree(work, ignore_errors=True)
    home = os.path.join(work, "home")
    os.makedirs(home)
    answer = answer_for(lane.slug, nonce)
    narrated = scenario == "narrated"
    provider = Provider(os.path.join(work, "provider"), answer,
                        read_path=PLAN_FILE if narrated else None)
    try:
        # Each lane reads its own key (upstream #4275), never the agents' effort settings.
        config = {"review": {"effort": {lane.slug: effort}}} if effort else {}
        project = suite.project(os.path.join(work, "project"), config)
        file_marker = f"PLAN-FILE-MARKER-{lane.slug}-{nonce}"
        if narrated:
            with open(os.path.join(project, PLAN_FILE), "a", encoding="utf-8") as f:
                f.write(f"\n{file_marker}\n")
        run_dir = os.path.join(work, "run")
        os.makedirs(run_dir)
        plan_marker = f"PLAN-MARKER-{lane.slug}-{nonce}"
        prompt = os.path.join(run_dir, "gsd-review-prompt.md")
        with open(prompt, "w") as f:
            f.write(f"Review this plan.\n\n{plan_marker}\n\n# Plan 03-01: invoice model\n")
        env = suite.base_env(home, lane)
        suite.install_overlays([lane], env)
        env.update(lane.configure(home, provider.url, project))
        if scenario == "renamed":
            env["PATH"] = suite.path(lane, renamed=True)
            env.update(lanedefs.replay(lane.renamed)(home, provider.url, project))
        if lane.slug == "antigravity":
            env["CONFORMANCE_AGY_MODE"] = "transcript" if scenario == "transcript" else "stdout"
        if trusted:
            lanedefs.gemini_trust(home, project)
        argv = [suite.gsd_lane, "run", lane.slug, "--run-dir", run_dir, "--repo-root",
                project, "--json", "--explicit"]
        if scenario == "model":
            argv += ["--model", lane.model_arg]
        try:
            proc = subprocess.run(argv, cwd=project, env=env, capture_output=True,
                                  timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            result.fail("ran", f"gsd-lane run did not finish in {RUN_TIMEOUT}s")
            return result
        with open(os.path.join(work, "gsd-lane.stderr"), "wb") as f:
            f.write(proc.stderr)
        try:
            report = json.loads(proc.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
        except (ValueError, IndexError):
            result.fail("ran", f"exit {proc.returncode}, no JSON: {proc.stdout[:200]!r} "
                        f"{proc.stderr[:300]!r}")
            return result
        if lane.unavailable_ok and not report.get("ok") and report.get("reason"):
            said = f"{report.get('reason')}: {report.get('detail', '')}"
            if re.search(lane.unavailable_ok, said, re.I | re.S):
                result.detail = f"unavailable, told before running: {said[:200]}"
            else:
                result.fail("told", f"unavailable, but the reason does not say why and what to "
                            f"do (want /{lane.unavailable_ok}/): {said[:200]!r}")
            return result
        err_path = os.path.join(run_dir, f"gsd-review-{lane.slug}.err")
        review_path = os.path.join(run_dir, f"gsd-review-{lane.slug}.md")
        err = ""
        if os.path.exists(err_path):
            with open(err_path, encoding="utf-8", errors="replace") as f:
                err = f.read()
        usage = USAGE_ERRORS.search(err)
        if usage:
            result.fail("argv", f"usage error in .err: {err[max(0, usage.start() - 80):usage.end() + 120]!r}")
        if not report.get("ok") or report.get("stubbed"):
            first = err.strip().splitlines()[-1][:240] if err.strip() else ""
            result.fail("ran", f"ok={report.get('ok')} stubbed={report.get('stubbed')} "
                        f"reason={report.get('reason')} stderr: {first!r}")
        seen = provider.requests_text()
        if not seen:
            result.fail("marker", "the provider received no request")
        elif lane.gets_prompt:
            expect = json.dumps(prompt)[1:-1] if lane.file_ref else plan_marker
            if expect not in seen:
                result.fail("marker", f"{expect!r} never reached the provider")
        check_review(result, review_path, lane.shape(answer) if lane.shape else answer)
        if narrated:
            check_narrated(result, seen, review_path, file_marker)
        if effort and lane.effort_wire:
            want = lane.effort_wire(effort)
            if want not in effort_values(seen):
                result.fail("effort", f"effort {effort} should reach the provider as {want!r}; "
                            f"seen {sorted(effort_values(seen))}")
        if scenario == "model" and lanedefs.OVERRIDE not in seen:
            gsd_err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            result.fail("model", f"--model {lane.model_arg} did not reach the provider"
                        + (f" (gsd-lane: {gsd_err[-1][:200]!r})" if gsd_err else ""))
        return result
    finally:
        provider.stop()


def review_scenario(suite, selected):
    """One `gsd-lane review --phase 3` with every runnable selected lane at once."""
    runnable = [l for l in selected if l.in_review and not suite.skip_reason(l)]
    result = Result("review", "-", "mixed", f"{len(runnable)} lanes at once")
    if any(l.slug == "gemini" for l in runnable):
        result.scenario += " [gemini folder trusted]"
    if not runnable:
        result.skip("no selected lane can run")
        return result
    work = os.path.join(suite.workroot, "review")
    shutil.rmtree(work, ignore_errors=True)
    home = os.path.join(work, "home")
    os.makedirs(home)
    nonce = secrets.token_hex(4)
    project = suite.project(os.path.join(work, "project"), {})
    plan_marker = f"PLAN-MARKER-review-{nonce}"
    plan = os.path.join(project, ".planning", "phases", "03-invoices", "03-01-PLAN.md")
    with open(plan, "a") as f:
        f.write(f"\n{plan_marker}\n")
    env = suite.base_env(home)
    suite.install_overlays(runnable, env)
    # The user-facing untrusted-folder case is gemini's `default` scenario; here the
    # folder is trusted so gemini's review is proven inside REVIEWS.md too.
    lanedefs.gemini_trust(home, project)
    reviews = os.path.join(project, ".planning", "phases", "03-invoices", "03-REVIEWS.md")
    providers, answers = {}, {}
    try:
        for lane in runnable:
            answers[lane.slug] = answer_for(lane.slug, nonce)
            providers[lane.slug] = Provider(os.path.join(work, f"provider-{lane.slug}"),
                                            answers[lane.slug],
                                            read_path=PLAN_FILE if lane.narrates else None)
            env.update(lane.configure(home, providers[lane.slug].url, project))
        env["CONFORMANCE_AGY_MODE"] = "stdout"
        text = None
        while runnable:
            argv = [suite.gsd_lane, "review", "--phase", "3"] + [l.flag for l in runnable]
            try:
                proc = subprocess.run(argv, cwd=project, env=env, capture_output=True,
                                      timeout=RUN_TIMEOUT * 2, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                result.fail("ran", "gsd-lane review did not finish")
                return result
            with open(os.path.join(work, "gsd-lane.stdout"), "ab") as f:
                f.write(proc.stdout)
            with open(os.path.join(work, "gsd-lane.stderr"), "ab") as f:
                f.write(proc.stderr)
            stderr = proc.stderr.decode("utf-8", "replace")
            try:
                with open(reviews, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                break
            except OSError:
                pass
            # An explicit lane that cannot run stops the whole review (as it should for
            # a user); record that as the lane's failure, then prove the others without it.
            blocked = re.search(r"explicit reviewer '([^']+)' (?:could not run|is not available)"
                                r"[^\n]*", stderr)
            lane = next((l for l in runnable if blocked and l.slug == blocked.group(1)), None)
            if lane is None:
                result.fail("ran", f"no REVIEWS.md (exit {proc.returncode}): {stderr[-300:]!r}")
                return result
            result.fail(lane.slug, f"review stopped: {blocked.group(0)[:200]}")
            runnable = [l for l in runnable if l is not lane]
        if text is None:
            return result
        bad = CONTROL.search(text)
        if bad:
            result.fail("clean", f"control byte {bad.group()!r} in REVIEWS.md near "
                        f"{text[max(0, bad.start() - 60):bad.start() + 40]!r}")
        if re.search(r"^## Summary$", text, re.MULTILINE):
            result.fail("nested", "a review's own `## Summary` heading sits at the level of the "
                        "reviewers' `## <Lane> Review` headings instead of under them")
        verdict_check(suite, result, reviews, text, runnable, project, env)
        for lane in runnable:
            missing = missing_lines(text, lane.shape(answers[lane.slug]) if lane.shape
                                    else answers[lane.slug])
            if missing:
                result.fail(lane.slug, f"its review is not verbatim in REVIEWS.md: no line {missing!r}")
            seen = providers[lane.slug].requests_text()
            if not lane.file_ref and lane.gets_prompt and plan_marker not in seen:
                result.fail(lane.slug, "the plan's marker never reached its provider")
            if lane.narrates:
                if not any(plan_marker in r for r in tool_results(seen)):
                    result.fail(lane.slug, "its `read` of the plan file never came back to "
                                "the provider")
                if NARRATION in text:
                    result.fail(lane.slug, "the narration before its tool call is in "
                                "REVIEWS.md")
        return result
    finally:
        for p in providers.values():
            p.stop()


def verdict_check(suite, result, reviews, text, runnable, project, env):
    """The panel verdict (issue 23): at the top of REVIEWS.md, and `gsd-lane verdict --json`
    recomputes it with one `review` entry per lane that ran."""
    if "**Panel verdict**" not in text:
        result.fail("verdict", "REVIEWS.md has no panel verdict at its top")
        return
    proc = subprocess.run([suite.gsd_lane, "verdict", reviews, "--json"], cwd=project, env=env,
                          capture_output=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    try:
        verdict = json.loads(proc.stdout)
    except ValueError:
        result.fail("verdict", f"`gsd-lane verdict --json` exit {proc.returncode}: "
                    f"{proc.stderr.decode('utf-8', 'replace')[-200:]!r}")
        return
    outcomes = {r["id"]: r["outcome"] for r in verdict.get("reviewers", [])}
    for lane in runnable:
        if outcomes.get(lane.slug) != "review":
            result.fail("verdict", f"{lane.slug}: outcome {outcomes.get(lane.slug)!r}, not 'review'")


def scenarios_for(lane):
    names = ["default"]
    if lane.model_arg:
        names.append("model")
    names += lane.scenarios
    if lane.narrates:
        names.append("narrated")
    if lane.renamed:
        names.append("renamed")
    efforts = lanedefs.EFFORT_LEVELS if lane.effort else []
    return [(n, None) for n in names] + [(f"effort-{e}", e) for e in efforts]


def print_table(results, isolation, tools, out=sys.stdout):
    rows = [("LANE", "CLI", "VERSION", "SCENARIO", "RESULT", "DETAIL")]
    for r in results:
        detail = "; ".join(r.failures) if r.failures else r.detail
        rows.append((r.lane, r.source, r.version, r.scenario, r.status, detail))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(5)] + [row[5]]
        print("  ".join(cells).rstrip(), file=out)
    print(f"network isolation: {isolation}", file=out)


def main():
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True)
    ap.add_argument("--gsd-lane", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--isolation", required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-review", action="store_true")
    ap.add_argument("lanes", nargs="*")
    args = ap.parse_args()
    with open(args.tools) as f:
        tools = json.load(f)
    known = {l.label: l for l in lanedefs.LANES}
    unknown = [s for s in args.lanes if s not in known]
    if unknown:
        print(f"conformance: unknown lane(s) {', '.join(unknown)}; known: {', '.join(known)}",
              file=sys.stderr)
        return 2
    selected = [known[s] for s in args.lanes] if args.lanes else lanedefs.LANES
    suite = Suite(tools, args.gsd_lane, args.work, args.sample)
    jobs = [(lane, name, effort) for lane in selected for name, effort in scenarios_for(lane)]
    results = [None] * len(jobs)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_scenario, suite, lane, name, effort): i
                   for i, (lane, name, effort) in enumerate(jobs)}
        for fut in concurrent.futures.as_completed(futures):
            i = futures[fut]
            try:
                results[i] = fut.result()
            except Exception as err:  # noqa: BLE001 - a crash of one scenario is its failure
                lane, name, _ = jobs[i]
                results[i] = Result(lane.label, suite.tool_version(lane), "?", name)
                results[i].fail("suite", f"{type(err).__name__}: {err}")
            r = results[i]
            print(f"conformance: {r.lane} {r.scenario}: {r.status}", file=sys.stderr, flush=True)
    if not args.no_review:
        results.append(review_scenario(suite, selected))
    print_table(results, args.isolation, tools)
    passed = sum(r.status == "PASS" for r in results)
    failed = sum(r.status == "FAIL" for r in results)
    skipped = sum(r.status == "SKIP" for r in results)
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
