#!/usr/bin/env python3
"""Streamed reviews (issue 25 item 3): what a big review and a big plan cost `gsd-lane review`.

Usage: python3 bench/review_stream.py <gsd-lane binary> [largest output MiB] [largest plan MB]
           [--before <another gsd-lane binary>] [--http-only]

1. Output 1 MiB..1 GiB: one lane printing N bytes of Markdown-like lines. The commands run
   back to back for each size, in the same round: the lane's own pipeline writing the file
   directly (the floor: this machine's speed at producing and writing the bytes), `cat` of
   that file into a new file and `fsync` of it (`copy`: the floor of writing the bytes once
   more, durably, as a review over the inline bound must be beside REVIEWS.md),
   `gsd-lane run` of the lane, and `gsd-lane review --phase 3` of the lane (and, with
   `--before`, the same review by the other binary, in the same round). Reported: wall time,
   the ratios review/run, run/direct and review/(run + copy), and each gsd-lane process's
   peak RSS (wait4 of that process).
2. Plan 10 KB..20 MB: a phase whose one plan has that size, reviewed in phase mode by a lane
   that reads its prompt and prints one line, with no budget (1 lane) and with 8 lanes each
   under a prompt budget (every lane trims its own prompt). Reported: wall time and peak RSS.

3. HTTP answers 1, 4 and 15 MiB (just under the 16 MiB body cap) and 20 MiB (past it): an
   OpenAI-compatible lane (a global overlay, `openai-http`) whose server is a Python
   `http.server` on 127.0.0.1:0 in this process, answering one chat completion whose content
   has that size. `gsd-lane run` and `gsd-lane review --phase 3` of the lane, medians of 3
   rounds, with peak RSS of the gsd-lane process (`wait4`; the lane runs inside it). Under the
   cap, the review `run` wrote and the section `review` wrote are checked whole (their SHA-256
   against the content's); past it, `run` must report a stub and `review` must not succeed
   silently. With `--before`, the other binary's `run` and `review` run in the same rounds.
   `--http-only` runs this part alone.

Everything runs in a fresh temporary directory (removed at the end); the largest output run
needs about three times the largest output size of free disk in the temp dir.
"""

import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import write_lane

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "examples", "sample-project")
MIB = 1024 * 1024
# One Markdown-like line of a review, repeated (`yes` prints it as fast as the disk takes it).
LINE = "* **MEDIUM** `src/ledger.py:42`: the total is rounded before the tax is applied"


# CPU seconds (user + system) of the last command `peak` ran, with every descendant it reaped
# (wait4's usage): on a loaded machine the steadier measure of what a command costs.
LAST_CPU = [0.0]


def peak(argv, env, cwd):
    """Wall seconds, peak RSS (MiB) of the process itself (wait4), exit status, stderr; its
    CPU time goes to LAST_CPU."""
    start = time.perf_counter()
    err = tempfile.TemporaryFile()
    pid = spawn_in(argv, env, cwd, err)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    LAST_CPU[0] = usage.ru_utime + usage.ru_stime
    err.seek(0)
    return elapsed, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), err.read().decode(
        errors="replace")


def spawn_in(argv, env, cwd, err):
    """Forks argv in `cwd` with stdout discarded and stderr to `err`; returns the pid."""
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            null = os.open("/dev/null", os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(err.fileno(), 2)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    return pid


def project(work, name, plan_bytes=None):
    """A copy of the sample project (its phase 3), with one plan of `plan_bytes` when given."""
    repo = os.path.join(work, name)
    shutil.copytree(SAMPLE, repo)
    os.makedirs(os.path.join(repo, ".git"))
    if plan_bytes is not None:
        phase = os.path.join(repo, ".planning", "phases", "03-invoices")
        os.remove(os.path.join(phase, "03-02-PLAN.md"))
        line = "- Step: change `src/ledger.py` so the invoice total is computed once.\n"
        with open(os.path.join(phase, "03-01-PLAN.md"), "w") as f:
            f.write("# Plan 03-01\n\n")
            f.write(line * (plan_bytes // len(line) + 1))
    return repo


def budgeted_lane(home, bindir, slug):
    """A lane that reads its prompt and prints one line, with a prompt budget key."""
    write_lane(home, bindir, slug)
    path = os.path.join(home, ".gsd", "capabilities", slug, "capability.json")
    with open(path) as f:
        manifest = json.load(f)
    key = f"review.max_prompt_tokens_per_reviewer.{slug}"
    manifest["reviewer"]["promptBudgetKey"] = key
    manifest["config"] = {key: {"type": "number", "default": -1, "description": "Budget."}}
    with open(path, "w") as f:
        json.dump(manifest, f)
    return key


def fmt(seconds):
    return f"{seconds:8.2f} s" if seconds >= 1 else f"{seconds * 1000:7.1f} ms"


def output_curve(gsd, work, env, sizes, rounds, before=None):
    print("output: one lane printing N bytes; review vs run vs the lane's pipeline writing the file")
    repo = project(work, "out-project")
    run_dir = os.path.join(work, "run")
    for mib in sizes:
        size = mib * MIB
        slug = f"out{mib}"
        script = f"yes '{LINE}' | head -c {size}"
        write_lane(os.path.join(work, "home"), os.path.join(work, "bin"), slug, script)
        direct_out = os.path.join(work, "direct.out")
        copy_out = os.path.join(work, "copy.out")
        reviewers = [("review", gsd)] + ([("before", before)] if before else [])
        rows = {"direct": [], "copy": [], "run": [], "review": [], "before": []}
        cpu = {"run": [], "review": [], "before": []}
        rss = {"run": 0.0, "review": 0.0, "before": 0.0}
        for _ in range(rounds):
            # Each command starts with no dirty pages of the one before (sync, not timed), so
            # none pays for another's writeback.
            os.sync()
            t, _, status, err = peak(["/bin/sh", "-c", f"{script} > {direct_out}"], env, repo)
            rows["direct"].append(t)
            os.sync()
            t, _, status, err = peak(["/bin/sh", "-c", f"cat {direct_out} > {copy_out} && "
                                      f"python3 -c 'import os,sys; f=os.open(sys.argv[1], "
                                      f"os.O_RDONLY); os.fsync(f)' {copy_out}"], env, repo)
            rows["copy"].append(t)
            os.remove(direct_out)
            os.remove(copy_out)
            os.sync()
            t, mem, status, err = peak([gsd, "run", slug, "--run-dir", run_dir, "--prompt-file",
                                        os.path.join(repo, ".planning", "PROJECT.md"),
                                        "--json"], env, repo)
            if status != 0:
                sys.exit(f"run {slug} exited {status}: {err[-2000:]}")
            rows["run"].append(t)
            cpu["run"].append(LAST_CPU[0])
            rss["run"] = max(rss["run"], mem)
            shutil.rmtree(run_dir, ignore_errors=True)
            for label, binary in reviewers:
                os.sync()
                t, mem, status, err = peak([binary, "review", "--phase", "3", "--" + slug],
                                           env, repo)
                if status != 0:
                    sys.exit(f"{label} review of {slug} exited {status}: {err[-2000:]}")
                rows[label].append(t)
                cpu[label].append(LAST_CPU[0])
                rss[label] = max(rss[label], mem)
                phase = os.path.join(repo, ".planning", "phases", "03-invoices")
                for name in os.listdir(phase):
                    if "REVIEWS" in name:
                        os.remove(os.path.join(phase, name))
        med = {k: sorted(v)[len(v) // 2] for k, v in rows.items() if v}
        mcpu = {k: sorted(v)[len(v) // 2] for k, v in cpu.items() if v}
        line = (f"{mib:5} MiB  direct {fmt(med['direct'])}  copy {fmt(med['copy'])}  run "
                f"{fmt(med['run'])} ({rss['run']:6.1f} MiB peak)")
        for label, _ in reviewers:
            line += (f"  {label} {fmt(med[label])} ({rss[label]:6.1f} MiB peak) "
                     f"{label}/run {med[label] / med['run']:5.2f}x "
                     f"{label}/(run+copy) {med[label] / (med['run'] + med['copy']):5.2f}x "
                     f"cpu {mcpu[label]:.2f}/{mcpu['run']:.2f} s = "
                     f"{mcpu[label] / max(mcpu['run'], 1e-9):5.2f}x")
        line += f"  run/direct {med['run'] / med['direct']:5.2f}x  (n={rounds})"
        print(line, flush=True)


def many_lanes(gsd, work, env, lanes, mib):
    """A review of `lanes` lanes each printing `mib` MiB: REVIEWS.md inlines each up to the
    bound, so its cost grows with the lanes, not with what they print."""
    repo = project(work, "many-project")
    slugs = [f"many{i}" for i in range(1, lanes + 1)]
    for slug in slugs:
        write_lane(os.path.join(work, "home"), os.path.join(work, "bin"), slug,
                   f"yes '{LINE}' | head -c {mib * MIB}")
    t, mem, status, err = peak([gsd, "review", "--phase", "3", "--jobs", str(lanes)]
                               + ["--" + s for s in slugs], env, repo)
    if status != 0:
        sys.exit(f"review of {lanes} lanes exited {status}: {err[-2000:]}")
    print(f"{lanes} lanes x {mib} MiB  review {fmt(t)} ({mem:6.1f} MiB peak)", flush=True)
    shutil.rmtree(repo, ignore_errors=True)


def prompt_curve(gsd, work, env, sizes):
    print("prompt: a phase whose plan has N bytes (phase mode; 1 lane, 8 budgeted lanes)")
    home, bindir = os.path.join(work, "home"), os.path.join(work, "bin")
    slugs = [f"plan{i}" for i in range(1, 9)]
    keys = [budgeted_lane(home, bindir, slug) for slug in slugs]
    for size in sizes:
        repo = project(work, f"plan-project-{size}", size)
        one = peak([gsd, "review", "--phase", "3", "--plan1", "--jobs", "8"], env, repo)
        if one[2] != 0:
            sys.exit(f"review of 1 lane exited {one[2]}: {one[3][-2000:]}")
        # Budgets between a quarter and the whole of the plan's estimate: every lane trims.
        tokens = size // 4
        budgets = {key: max(4000, tokens * (i + 2) // 10) for i, key in enumerate(keys)}
        config = {"review": {"max_prompt_tokens_per_reviewer": {
            key.rsplit(".", 1)[1]: value for key, value in budgets.items()}}}
        with open(os.path.join(repo, ".planning", "config.json"), "w") as f:
            json.dump(config, f)
        flags = ["--" + slug for slug in slugs]
        eight = peak([gsd, "review", "--phase", "3", "--jobs", "8"] + flags, env, repo)
        if eight[2] != 0:
            sys.exit(f"review of 8 budgeted lanes exited {eight[2]}: {eight[3][-2000:]}")
        label = f"{size / 1e6:g} MB" if size >= 1_000_000 else f"{size / 1e3:g} KB"
        print(f"plan {label:>7}  1 lane: {fmt(one[0])} {one[1]:6.1f} MiB peak   "
              f"8 budgeted lanes: {fmt(eight[0])} {eight[1]:6.1f} MiB peak", flush=True)
        shutil.rmtree(repo, ignore_errors=True)


def serve_completions():
    """`--serve-completions`: an OpenAI-compatible server on 127.0.0.1:0 (a thread of this
    process), which prints its port, then for each line `<MiB>` read on stdin makes that the
    size of the answer's content and prints `{"sha256", "tail", "body"}` of it. It runs in its
    own process: the answer must not be in the measuring process, whose resident size each
    forked command starts from (a child's peak RSS counts what it inherited until its exec)."""
    answer = [b"{}"]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, body):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # a client past its cap hangs up

        def do_GET(self):
            self.reply(json.dumps({"data": [{"id": "bench-model"}]}).encode())

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.reply(answer[0])

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    for line in sys.stdin:
        mib = int(line)
        tail = f"\nend of the {mib} MiB answer\n"
        content = ((LINE + "\n") * (mib * MIB // (len(LINE) + 1) + 1))[:mib * MIB - len(tail)]
        content += tail
        answer[0] = json.dumps({"id": "chatcmpl-bench", "object": "chat.completion",
                                "model": "bench-model",
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant",
                                                         "content": content}}]}).encode()
        print(json.dumps({"sha256": hashlib.sha256(content.encode()).hexdigest(),
                          "tail": tail.strip(), "body": len(answer[0])}), flush=True)
    server.shutdown()


def write_http_lane(home, slug):
    """An `openai-http` lane `slug` (a global overlay, the run fixture's shape) whose host is
    the config key `review.<slug>_host`; returns that key's last part."""
    fixture = os.path.join(HERE, "..", "tests", "fixtures", "run", "http", "acme-review",
                           "capability.json")
    with open(fixture) as f:
        manifest = json.load(f)
    key = f"{slug}_host"
    body = manifest["reviewer"]
    manifest["id"] = slug
    manifest["title"] = slug
    body.update({"slug": slug, "flags": ["--" + slug], "reviewsSection": slug.title(),
                 "timeoutFloorMs": 600000, "promptBudgetKey": None,
                 "modelConfigKey": f"review.models.{slug}"})
    body["probe"]["hostConfigKey"] = f"review.{key}"
    body["invoke"]["hostConfigKey"] = f"review.{key}"
    manifest["config"] = {
        f"review.{key}": {"type": "string", "default": "", "description": "Bench server."},
        f"review.models.{slug}": {"type": "string", "default": "", "description": "Model."},
    }
    cap = os.path.join(home, ".gsd", "capabilities", slug)
    os.makedirs(cap, exist_ok=True)
    with open(os.path.join(cap, "capability.json"), "w") as f:
        json.dump(manifest, f)
    return key


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def whole_review_of(phase, slug):
    """The file holding the whole review of `slug` after `review`: the `.full.md` beside
    REVIEWS.md when there is one, else None (the review was inlined whole)."""
    fulls = [n for n in os.listdir(phase) if n.endswith(".full.md") and slug in n]
    return os.path.join(phase, fulls[0]) if fulls else None


def http_round(gsd, env, repo, slug, answer, rows, rss, label):
    """One `run` and one `review` of the HTTP lane by `gsd`, checked; their times and peaks go
    to `rows`/`rss` under `label`; returns what `review` said when the answer is past the cap."""
    phase = os.path.join(repo, ".planning", "phases", "03-invoices")
    run_dir = os.path.join(os.path.dirname(repo), "http-run")
    want, tail, over = answer["sha256"], answer["tail"], answer["body"] > 16 * MIB
    mib = answer["mib"]
    os.sync()
    t, mem, status, err = peak([gsd, "run", slug, "--run-dir", run_dir, "--prompt-file",
                                os.path.join(repo, ".planning", "PROJECT.md"), "--json"],
                               env, repo)
    if status != 0:
        sys.exit(f"{label}run {slug} ({mib} MiB) exited {status}: {err[-2000:]}")
    written = os.path.join(run_dir, f"gsd-review-{slug}.md")
    with open(written, "rb") as f:
        head = f.read(200)
    if over and not head.startswith(f"{slug} review failed".encode()):
        sys.exit(f"{label}run of a {mib} MiB answer (past the cap) wrote no stub: {head!r}")
    if not over and sha256_of(written) != want:
        sys.exit(f"{label}run of a {mib} MiB answer wrote another review")
    rows[label + "run"].append(t)
    rss[label + "run"] = max(rss[label + "run"], mem)
    shutil.rmtree(run_dir, ignore_errors=True)
    os.sync()
    t, mem, status, err = peak([gsd, "review", "--phase", "3", "--" + slug], env, repo)
    reviews = [n for n in os.listdir(phase) if n.endswith("REVIEWS.md")]
    said = ""
    if over:
        if status == 0 and reviews:
            with open(os.path.join(phase, reviews[0]), "rb") as f:
                text = f.read(1 << 20)
            if b"incomplete" not in text and b"failed" not in text.lower():
                sys.exit(f"{label}review of a {mib} MiB answer (past the cap) looks clean")
        said = f"exit {status}, " + (err.strip().splitlines() or ["(no stderr)"])[-1][:120]
        # A review with a failed lane keeps its run dir for --resume: not ours to keep.
        for line in err.splitlines():
            if "run dir kept: " in line:
                shutil.rmtree(line.split("run dir kept: ", 1)[1].strip(), ignore_errors=True)
    else:
        if status != 0:
            sys.exit(f"{label}review of {slug} ({mib} MiB) exited {status}: {err[-2000:]}")
        full = whole_review_of(phase, slug)
        if full is not None and sha256_of(full) != want:
            sys.exit(f"{label}review of a {mib} MiB answer kept another review in {full}")
        if full is None:
            # Under the inline bound: REVIEWS.md holds it all, to its last line.
            with open(os.path.join(phase, reviews[0]), "rb") as f:
                if tail.encode() not in f.read():
                    sys.exit(f"{label}REVIEWS.md lacks the end of the {mib} MiB answer")
    rows[label + "review"].append(t)
    rss[label + "review"] = max(rss[label + "review"], mem)
    for name in os.listdir(phase):
        if "REVIEWS" in name:
            os.remove(os.path.join(phase, name))
    return said


def http_curve(gsd, work, env, sizes, rounds, before=None):
    print("http: an OpenAI-compatible lane answering N MiB of content (the body cap is 16 MiB)")
    repo = project(work, "http-project")
    slug = "httpbench"
    key = write_http_lane(os.path.join(work, "home"), slug)
    server = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve-completions"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{int(server.stdout.readline())}"
    with open(os.path.join(repo, ".planning", "config.json"), "w") as f:
        json.dump({"review": {key: url, "models": {slug: "bench-model"}}}, f)
    _, floor, _, _ = peak([gsd, "--version"], env, repo)
    print(f"floor: `gsd-lane --version` {floor:6.1f} MiB peak (what a forked command starts from)")
    binaries = [("", gsd)] + ([("before ", before)] if before else [])
    try:
        for mib in sizes:
            server.stdin.write(f"{mib}\n")
            server.stdin.flush()
            answer = json.loads(server.stdout.readline())
            answer["mib"] = mib
            rows = {label + kind: [] for label, _ in binaries for kind in ("run", "review")}
            rss = {key: 0.0 for key in rows}
            said = ""
            for _ in range(rounds):
                for label, binary in binaries:
                    said = http_round(binary, env, repo, slug, answer, rows, rss, label) or said
            med = {k: sorted(v)[len(v) // 2] for k, v in rows.items()}
            line = f"{mib:5} MiB answer ({answer['body'] / MIB:5.1f} MiB body)"
            for label, _ in binaries:
                line += (f"  {label}run {fmt(med[label + 'run'])} "
                         f"({rss[label + 'run']:6.1f} MiB peak)  {label}review "
                         f"{fmt(med[label + 'review'])} ({rss[label + 'review']:6.1f} MiB peak)")
            line += f"  (n={rounds})"
            if answer["body"] > 16 * MIB:
                line += f"  past the cap: run wrote a stub; review {said}"
            print(line, flush=True)
    finally:
        server.stdin.close()
        server.wait(timeout=30)
        shutil.rmtree(repo, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if args == ["--serve-completions"]:
        serve_completions()
        return
    http_only = "--http-only" in args
    if http_only:
        args.remove("--http-only")
    before = None
    if "--before" in args:
        at = args.index("--before")
        before = os.path.abspath(args[at + 1])
        del args[at:at + 2]
    gsd = os.path.abspath(args[0])
    largest_out = int(args[1]) if len(args) > 1 else 1024
    largest_plan = int(args[2]) if len(args) > 2 else 20
    work = tempfile.mkdtemp(prefix="gsd-bench-stream-")
    home, bindir = os.path.join(work, "home"), os.path.join(work, "bin")
    for d in (home, bindir):
        os.makedirs(d)
    env = {"PATH": bindir + ":/usr/bin:/bin", "HOME": home, "GSD_HOME": home,
           "TMPDIR": os.environ.get("TMPDIR", "/tmp")}
    try:
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        if http_only:
            http_curve(gsd, work, env, [1, 4, 15, 20], 3, before)
            return
        sizes = [s for s in (1, 16, 128, 1024) if s <= largest_out]
        if largest_out not in sizes and largest_out > 0:
            sizes.append(largest_out)
        output_curve(gsd, work, env, sizes, 3, before)
        if largest_out >= 16:
            many_lanes(gsd, work, env, 8, 16)
        plans = [s for s in (10_000, 1_000_000, 5_000_000, 20_000_000)
                 if s <= largest_plan * 1_000_000]
        prompt_curve(gsd, work, env, plans)
        http_curve(gsd, work, env, [1, 4, 15, 20], 3, before)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
