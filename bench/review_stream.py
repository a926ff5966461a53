#!/usr/bin/env python3
"""Streamed reviews (issue 25 item 3): what a big review and a big plan cost `gsd-lane review`.

Usage: python3 bench/review_stream.py <gsd-lane binary> [largest output MiB] [largest plan MB]
           [--before <another gsd-lane binary>]

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

Everything runs in a fresh temporary directory (removed at the end); the largest output run
needs about three times the largest output size of free disk in the temp dir.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
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


def main():
    args = sys.argv[1:]
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
        sizes = [s for s in (1, 16, 128, 1024) if s <= largest_out]
        if largest_out not in sizes and largest_out > 0:
            sizes.append(largest_out)
        output_curve(gsd, work, env, sizes, 3, before)
        if largest_out >= 16:
            many_lanes(gsd, work, env, 8, 16)
        plans = [s for s in (10_000, 1_000_000, 5_000_000, 20_000_000)
                 if s <= largest_plan * 1_000_000]
        prompt_curve(gsd, work, env, plans)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
