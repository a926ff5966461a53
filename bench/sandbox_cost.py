#!/usr/bin/env python3
"""Extra cost per spawn of the lane sandbox: `gsd-lane run` of a lane that exits at once, under
`--sandbox off`, `detect` and `enforce`, runs interleaved so drift hits every mode alike.

Usage: python3 bench/sandbox_cost.py <gsd-lane binary> [runs]

Two repositories: a small one (the project directory alone) and one with 5,000 files, which is
what the detection walk pays for. Prints one line per mode and repository, then the median of
paired differences against `off`.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import write_lane, cpu


def once(argv, env, cwd):
    """Wall time and CPU time (user + system of the whole process tree) of one command."""
    start, start_cpu = time.perf_counter(), cpu()
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed, used = time.perf_counter() - start, cpu() - start_cpu
    if done.returncode != 0:
        sys.exit(f"{argv} exited {done.returncode}")
    return elapsed, used


def main():
    gsd = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    work = tempfile.mkdtemp(prefix="gsd-bench-sandbox-")
    home, bindir = os.path.join(work, "home"), os.path.join(work, "bin")
    small, large = os.path.join(work, "small"), os.path.join(work, "large")
    for d in (home, bindir, os.path.join(small, ".planning"), os.path.join(large, ".planning")):
        os.makedirs(d, exist_ok=True)
    for i in range(50):
        sub = os.path.join(large, f"d{i:02}")
        os.makedirs(sub)
        for j in range(100):
            with open(os.path.join(sub, f"f{j:03}.txt"), "w") as f:
                f.write("x" * 100)
    write_lane(home, bindir, "quick")
    prompt = os.path.join(work, "prompt.md")
    with open(prompt, "w") as f:
        f.write("# Plan\n" * 100)
    env = {"PATH": bindir + ":/usr/bin:/bin", "HOME": home, "GSD_HOME": home}
    modes = ["off", "detect", "enforce"]
    print(f"entries in the repository's ancestor directories: "
          f"{sum(len(os.listdir(d)) for d in ('/', os.path.dirname(work), work))}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    lane = os.path.join(bindir, "quick")
    direct = [once([lane, "-"], env, small) for _ in range(runs)]
    print(f"{'lane spawned directly':24} {'':8} median "
          f"{statistics.median(w for w, _ in direct) * 1000:7.2f} ms   "
          f"CPU median {statistics.median(c for _, c in direct) * 1000:6.2f} ms   (n={runs})")
    for name, repo in (("small repository", small), ("5,000-file repository", large)):
        times = {mode: [] for mode in modes}
        cpus = {mode: [] for mode in modes}
        for _ in range(runs):
            for mode in modes:
                run_dir = os.path.join(work, "run")
                argv = [gsd, "run", "quick", "--run-dir", run_dir, "--prompt-file", prompt,
                        "--repo-root", repo, "--sandbox", mode, "--json"]
                wall, used = once(argv, env, repo)
                times[mode].append(wall)
                cpus[mode].append(used)
        for mode in modes:
            t = times[mode]
            print(f"{name:24} {mode:8} median {statistics.median(t) * 1000:7.2f} ms   "
                  f"min {min(t) * 1000:7.2f}   max {max(t) * 1000:7.2f}   "
                  f"CPU median {statistics.median(cpus[mode]) * 1000:6.2f} ms   (n={runs})")
        for mode in ("detect", "enforce"):
            diffs = [a - b for a, b in zip(times[mode], times["off"])]
            cpu_diffs = [a - b for a, b in zip(cpus[mode], cpus["off"])]
            print(f"{name:24} {mode} - off: median of paired differences "
                  f"{statistics.median(diffs) * 1000:.2f} ms wall, "
                  f"{statistics.median(cpu_diffs) * 1000:.2f} ms CPU")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
