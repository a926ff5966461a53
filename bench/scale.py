#!/usr/bin/env python3
"""How gsd-lane scales (issue 25): lanes per review, overlays per `doctor`, recorded runs, and
the start cost of `run`; each figure beside a baseline measured in the same run.

Usage: python3 bench/scale.py <gsd-lane binary> [section ...]
       sections: lanes, doctor, runs, start (default: all)
       GSD_BENCH_SCALE=small shrinks every size (a quick check of the script itself)

- lanes: `review` of N fake lanes (1 to 128) at the default --jobs, each lane sleeping 50 ms;
  wall time, and the most descriptors gsd-lane held open at once (sampled from /proc every
  2 ms). Baseline: one lane spawned directly, and N / jobs rounds of it.
- doctor: `doctor --json` over 10,000 global overlays, each a program answering `--version`.
  Baseline: `list` over the same overlays (discovering and validating them, no probe).
- runs: `runs` and `review --resume` with 200 recorded runs and 10,000 other entries in the
  temporary directory, against the same with one recorded run; --resume must resume the newest.
- start: `run` of a lane that exits at once, against `gsd-lane --version` plus the lane spawned
  directly (the target is `run` within 2x of that sum), paired per round; wall time and CPU time
  (steadier on a loaded machine).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from benchlib import write_lane

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "examples", "sample-project")
SMALL = os.environ.get("GSD_BENCH_SCALE") == "small"


def peak_fds(pid, stop, out):
    """Samples the descriptors of `pid` until `stop` is set; the most seen goes to out[0]."""
    path = f"/proc/{pid}/fd"
    while not stop.is_set():
        try:
            out[0] = max(out[0], len(os.listdir(path)))
        except OSError:
            pass
        time.sleep(0.002)


def timed(argv, env, cwd, stdin=None, fds=False, check=True):
    """Wall seconds (and the peak descriptors of the process when `fds`) of one command."""
    stdin_file = open(stdin, "rb") if stdin else subprocess.DEVNULL
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=stdin_file,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stop, peak = threading.Event(), [0]
    sampler = None
    if fds:
        sampler = threading.Thread(target=peak_fds, args=(proc.pid, stop, peak))
        sampler.start()
    out, err = proc.communicate()
    elapsed = time.perf_counter() - start
    stop.set()
    if sampler:
        sampler.join()
    if stdin:
        stdin_file.close()
    if check and proc.returncode != 0:
        sys.exit(f"{argv[:3]}... exited {proc.returncode}: {err.decode(errors='replace')[-2000:]}")
    return elapsed, peak[0], out, err


def project(work):
    repo = os.path.join(work, "project")
    shutil.copytree(SAMPLE, repo)
    os.makedirs(os.path.join(repo, ".git"))
    return repo


def setup(prefix):
    work = tempfile.mkdtemp(prefix=prefix)
    home, bindir = os.path.join(work, "home"), os.path.join(work, "bin")
    os.makedirs(home)
    os.makedirs(bindir)
    env = {"PATH": bindir + ":/usr/bin:/bin", "HOME": home, "GSD_HOME": home,
           "TMPDIR": os.path.join(work, "tmp")}
    os.makedirs(env["TMPDIR"])
    return work, home, bindir, env


def lanes(gsd):
    work, home, bindir, env = setup("gsd-bench-lanes-")
    repo = project(work)
    sizes = [1, 2, 4, 8, 16] if SMALL else [1, 2, 4, 8, 16, 32, 64, 128]
    slugs = [f"sleepy{i}" for i in range(1, max(sizes) + 1)]
    path = [write_lane(home, bindir, s, "cat >/dev/null; sleep 0.05; echo ok") for s in slugs][0]
    prompt = os.path.join(work, "prompt.md")
    with open(prompt, "w") as f:
        f.write("# Plan\n" * 100)
    rounds = 3
    direct = statistics.median(timed([path, "-"], env, repo, prompt)[0] for _ in range(5))
    print(f"lane spawned directly: {direct * 1000:.1f} ms (sleeps 50 ms)")
    print(f"{'lanes':>6} {'wall ms':>9} {'x lane':>7} {'peak fds':>9}")
    for n in sizes:
        flags = ["--" + s for s in slugs[:n]]
        walls, fds = [], []
        for _ in range(rounds):
            wall, peak, _, _ = timed([gsd, "review", "--phase", "3", "--sandbox", "enforce"] + flags,
                                  env, repo, fds=True)
            walls.append(wall)
            fds.append(peak)
        wall = statistics.median(walls)
        print(f"{n:>6} {wall * 1000:>9.1f} {wall / direct:>7.1f} {max(fds):>9}")
    shutil.rmtree(work, ignore_errors=True)


def doctor(gsd):
    work, home, bindir, env = setup("gsd-bench-doctor-")
    repo = project(work)
    count = 500 if SMALL else 10_000
    for i in range(count):
        write_lane(home, bindir, f"ov{i:05d}",
                   'if [ "$1" = --version ]; then echo "ov 1.0"; exit 0; fi; cat >/dev/null; echo ok')
    list_wall = statistics.median(timed([gsd, "list"], env, repo)[0] for _ in range(3))
    wall, peak, out, _ = timed([gsd, "doctor", "--json"], env, repo, fds=True, check=False)
    rows = json.loads(out)
    versions = sum(1 for r in rows if (r.get("program") or {}).get("version") == "ov 1.0")
    print(f"{count} overlays: list {list_wall:.2f} s; doctor --json {wall:.2f} s "
          f"({wall / list_wall:.1f}x list), peak fds {peak}; "
          f"{len(rows)} rows, {versions} versions read")
    shutil.rmtree(work, ignore_errors=True)


def runs(gsd):
    work, home, bindir, env = setup("gsd-bench-runs-")
    repo = project(work)
    # A lane that prints nothing: its stub keeps each run dir, so that every run stays listed.
    write_lane(home, bindir, "quick", "cat >/dev/null")
    recorded = 20 if SMALL else 200
    others = 1_000 if SMALL else 10_000

    def review():
        timed([gsd, "review", "--phase", "3", "--quick", "--sandbox", "off"], env, repo,
              check=False)

    review()
    one = statistics.median(timed([gsd, "runs", "--json"], env, repo)[0] for _ in range(5))
    for _ in range(recorded - 1):
        review()
    for i in range(others):
        os.mkdir(os.path.join(env["TMPDIR"], f"other-{i:05d}"))
    many, _, out, _ = timed([gsd, "runs", "--json"], env, repo)
    many = min([many] + [timed([gsd, "runs", "--json"], env, repo)[0] for _ in range(4)])
    listed = json.loads(out)
    newest = listed[0].get("runDir") if listed else None
    resume, _, out, err = timed([gsd, "review", "--resume", "--phase", "3", "--quick",
                                 "--sandbox", "off"], env, repo, check=False)
    if newest and os.path.basename(newest) not in (out + err).decode(errors="replace"):
        print(f"review --resume did not name the newest run {newest}")
    print(f"runs --json: 1 recorded run {one * 1000:.1f} ms; {recorded} recorded and {others} "
          f"other temp entries {many * 1000:.1f} ms ({many / one:.1f}x), {len(listed)} listed, "
          f"newest {os.path.basename(newest or '?')}; review --resume {resume * 1000:.1f} ms")
    shutil.rmtree(work, ignore_errors=True)


def timed_cpu(argv, env, cwd, stdin=None):
    """Wall seconds and CPU seconds (user + system of the process and the children it waited
    for) of one command whose output is discarded; it must succeed."""
    stdin_file = open(stdin, "rb") if stdin else subprocess.DEVNULL
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=stdin_file,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if stdin:
        stdin_file.close()
    if status != 0:
        sys.exit(f"{argv[:3]}... exited with status {status}")
    return elapsed, usage.ru_utime + usage.ru_stime


def start(gsd):
    work, home, bindir, env = setup("gsd-bench-start-")
    repo = project(work)
    lane = write_lane(home, bindir, "quick")
    prompt = os.path.join(work, "prompt.md")
    with open(prompt, "w") as f:
        f.write("# Plan\n" * 100)
    run_dir = os.path.join(work, "run")
    commands = {
        "/bin/true": ([ "/bin/true"], None),
        "gsd-lane --version": ([gsd, "--version"], None),
        "lane spawned directly": ([lane, "-"], prompt),
    }
    # GSD_BENCH_BEFORE=<an older gsd-lane>: its `run` too, interleaved (before and after).
    before = os.environ.get("GSD_BENCH_BEFORE")
    for mode in ("enforce", "off"):
        for label, binary in (("run", gsd), ("run (before)", before)):
            if binary:
                commands[f"{label}, sandbox {mode}"] = (
                    [binary, "run", "quick", "--run-dir", run_dir, "--prompt-file", prompt,
                     "--repo-root", repo, "--sandbox", mode, "--json"], None)
    rounds = 10 if SMALL else 40
    times = {name: [] for name in commands}
    cpu = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (argv, stdin) in commands.items():
            wall, used = timed_cpu(argv, env, repo, stdin)
            times[name].append(wall)
            cpu[name].append(used)
    for name, t in times.items():
        print(f"{name:24} median {statistics.median(t) * 1000:7.2f} ms  min {min(t) * 1000:7.2f}"
              f"  CPU median {statistics.median(cpu[name]) * 1000:6.2f} ms")
    base = [times["gsd-lane --version"][r] + times["lane spawned directly"][r]
            for r in range(rounds)]
    cpu_base = [cpu["gsd-lane --version"][r] + cpu["lane spawned directly"][r]
                for r in range(rounds)]
    for name in [n for n in times if n.startswith("run")]:
        # Paired per round (drift cancels), and the fastest of each (the machine's floor).
        ratio = statistics.median(times[name][r] / base[r] for r in range(rounds))
        rest = statistics.median(times[name][r] - base[r] for r in range(rounds))
        floor = min(times[name]) / (min(times["gsd-lane --version"])
                                    + min(times["lane spawned directly"]))
        cpu_ratio = statistics.median(cpu[name][r] / cpu_base[r] for r in range(rounds))
        print(f"{name:26} / (--version + lane): median {ratio:.2f}x, the rest {rest * 1000:.2f} "
              f"ms; fastest / fastest {floor:.2f}x; CPU median {cpu_ratio:.2f}x")
    shutil.rmtree(work, ignore_errors=True)


def main():
    gsd = os.path.abspath(sys.argv[1])
    chosen = sys.argv[2:] or ["start", "lanes", "runs", "doctor"]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name in chosen:
        print(f"## {name}")
        {"lanes": lanes, "doctor": doctor, "runs": runs, "start": start}[name](gsd)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
