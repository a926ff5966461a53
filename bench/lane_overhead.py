#!/usr/bin/env python3
"""Host overhead per lane: `gsd-lane run` and `gsd-lane review` of a lane that exits at once,
against spawning the same lane directly, with the sandbox on (`enforce`, the default) and off;
and the floor of any gsd-lane command, its own process start, against /bin/true.

Usage: python3 bench/lane_overhead.py <gsd-lane binary> [runs]

- run: `gsd-lane run quick` minus the lane spawned directly;
- review, per lane: `gsd-lane review --jobs 1` of 1 and of 8 such lanes. "Marginal" is what one
  more lane adds, (T(8) - T(1)) / 7, minus the lane alone (8 lanes, not fewer, so that the noise
  is divided by 7); "amortised" is (T(8) - 8 x lane) / 8, which also spreads review's one-time
  work (phase, prompt, REVIEWS.md) over the lanes.

Commands run interleaved (one of each per round), and each figure is the median over rounds of
that round's own difference, so that drift on a shared machine cancels out. The repository is a
copy of examples/sample-project in a fresh temporary directory.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import write_lane, cpu

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "examples", "sample-project")


def once(argv, env, cwd, stdin_path=None):
    """Wall time and CPU time of one command, which must succeed."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    start_cpu = cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=stdin, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed, used = time.perf_counter() - start, cpu() - start_cpu
    if stdin_path:
        stdin.close()
    if done.returncode != 0:
        sys.exit(f"{argv} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    return elapsed, used


def main():
    gsd = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    work = tempfile.mkdtemp(prefix="gsd-bench-overhead-")
    home, bindir = os.path.join(work, "home"), os.path.join(work, "bin")
    repo, run_dir = os.path.join(work, "project"), os.path.join(work, "run")
    for d in (home, bindir):
        os.makedirs(d)
    shutil.copytree(SAMPLE, repo)
    os.makedirs(os.path.join(repo, ".git"))
    slugs = [f"quick{i}" for i in range(1, 9)]
    lane = [write_lane(home, bindir, slug) for slug in slugs][0]
    prompt = os.path.join(work, "prompt.md")
    with open(prompt, "w") as f:
        f.write("# Plan\n" * 100)
    env = {"PATH": bindir + ":/usr/bin:/bin", "HOME": home, "GSD_HOME": home}

    # The floor of any gsd-lane command: the process starting and ending with no work (the
    # watchdog reading an empty input), beside the smallest process there is.
    commands = {"/bin/true": (["/bin/true"], None),
                "gsd-lane start alone": ([gsd, "__lane-watchdog", "0-0"], None),
                "lane spawned directly": ([lane, "-"], prompt)}
    for mode in ("enforce", "off"):
        commands[f"run, sandbox {mode}"] = (
            [gsd, "run", "quick1", "--run-dir", run_dir, "--prompt-file", prompt,
             "--repo-root", repo, "--sandbox", mode, "--json"], None)
        for n in (1, 8):
            flags = ["--" + slug for slug in slugs[:n]]
            commands[f"review of {n}, sandbox {mode}"] = (
                [gsd, "review", "--phase", "3", "--jobs", "1", "--sandbox", mode] + flags, None)
    times = {name: [] for name in commands}
    cpus = {name: [] for name in commands}
    for _ in range(runs):
        for name, (argv, stdin) in commands.items():
            wall, used = once(argv, env, repo, stdin)
            times[name].append(wall)
            cpus[name].append(used)
    med = {name: statistics.median(t) for name, t in times.items()}
    med_cpu = {name: statistics.median(c) for name, c in cpus.items()}

    entries = sum(len(os.listdir(d)) for d in ("/", os.path.dirname(work), work))
    print(f"entries in the repository's ancestor directories: {entries}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; n={runs}")
    for name, t in times.items():
        print(f"{name:28} median {med[name] * 1000:7.2f} ms   "
              f"min {min(t) * 1000:7.2f}   max {max(t) * 1000:7.2f}   "
              f"CPU median {med_cpu[name] * 1000:6.2f} ms")
    # Each figure is the median over rounds of that round's own difference: the commands of one
    # round ran back to back, so drift between rounds cancels out.
    for label, series in (("wall", times), ("CPU ", cpus)):
        def paired(formula):
            return statistics.median(formula(r) for r in range(runs)) * 1000

        def at(name, r):
            return series[name][r]

        start = paired(lambda r: at("gsd-lane start alone", r) - at("/bin/true", r))
        print(f"gsd-lane's own start ({label}) over /bin/true: {start:6.2f} ms")
        for mode in ("enforce", "off"):
            run, one, eight = (f"run, sandbox {mode}", f"review of 1, sandbox {mode}",
                               f"review of 8, sandbox {mode}")
            lane = "lane spawned directly"
            run_over = paired(lambda r: at(run, r) - at(lane, r))
            marginal = paired(lambda r: (at(eight, r) - at(one, r)) / 7 - at(lane, r))
            amortised = paired(lambda r: (at(eight, r) - 8 * at(lane, r)) / 8)
            print(f"host overhead ({label}), sandbox {mode:7}  run {run_over:6.2f} ms   "
                  f"review per lane: marginal {marginal:6.2f} ms, "
                  f"amortised {amortised:6.2f} ms")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
