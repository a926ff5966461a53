#!/usr/bin/env python3
"""What confinement and change detection cost as the repository grows (issue 25, item 2):
`gsd-lane review --prompt-file` of 1 and of 8 fake lanes that exit at once, over repositories of
1k to 300k files, under `--sandbox off`, `detect`, `enforce` (the read-only view) and `enforce`
with the Landlock fallback (`GSD_LANE_NO_NAMESPACES=1`). Every mode of one size runs interleaved
in the same round, so drift hits every mode alike; figures are medians, shown as ratios against
`off` of the same size.

Usage: python3 bench/detect_cost.py <gsd-lane binary> [runs] [sizes...]
       (default 3 runs; sizes 1000 10000 100000 300000)

Printed per size and mode: wall, CPU (user + system of the whole process tree; the system part
of the 8-lane review in brackets: the walks' `fstatat` calls are most of it) and peak RSS
(the largest resident set of any process in the tree) of a 1-lane and an 8-lane review; the
cost per added lane, (T8 - T1) / 7; and that cost as a ratio of `off`'s cost per added lane.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import write_lane

MODES = [
    ("off", "off", {}),
    ("detect", "detect", {}),
    ("enforce/view", "enforce", {}),
    ("enforce/landlock", "enforce", {"GSD_LANE_NO_NAMESPACES": "1"}),
]
LANES = 8


def measure(argv, env, cwd):
    """Wall seconds, CPU seconds and peak RSS (MiB) of one command and its whole tree."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    err = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0,):
        sys.exit(f"{argv} exited {child.returncode}: {err[-2000:]}")
    return wall, (usage.ru_utime + usage.ru_stime, usage.ru_stime), usage.ru_maxrss / 1024


def make_repository(path, files):
    """`files` empty files, 100 to a directory, under `path` (with `.planning/` and `.git/`)."""
    os.makedirs(os.path.join(path, ".planning"))
    os.makedirs(os.path.join(path, ".git"))
    per_dir = 100
    for d in range((files + per_dir - 1) // per_dir):
        sub = os.path.join(path, f"d{d // 100:03}", f"e{d % 100:02}")
        os.makedirs(sub, exist_ok=True)
        for j in range(min(per_dir, files - d * per_dir)):
            open(os.path.join(sub, f"f{j:03}.txt"), "w").close()


def main():
    gsd = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    sizes = [int(s) for s in sys.argv[3:]] or [1000, 10000, 100000, 300000]
    work = tempfile.mkdtemp(prefix="gsd-bench-detect-")
    try:
        home, bindir = os.path.join(work, "home"), os.path.join(work, "bin")
        os.makedirs(home)
        os.makedirs(bindir)
        slugs = [f"quick{i}" for i in range(1, LANES + 1)]
        for slug in slugs:
            write_lane(home, bindir, slug)
        prompt = os.path.join(work, "prompt.md")
        with open(prompt, "w") as f:
            f.write("# Plan\n" * 100)
        base_env = {"PATH": bindir + ":/usr/bin:/bin", "HOME": home, "GSD_HOME": home}
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {runs} runs; "
              f"binary {gsd}")
        for size in sizes:
            repo = os.path.join(work, f"repo{size}")
            make_repository(repo, size)
            figures = {}
            for _ in range(runs):
                for name, mode, extra in MODES:
                    env = dict(base_env, **extra)
                    for lanes in (1, LANES):
                        out = os.path.join(work, "REVIEWS.md")
                        argv = [gsd, "review", "--prompt-file", prompt, "--out", out,
                                "--sandbox", mode, "--jobs", str(LANES)]
                        argv += ["--" + s for s in slugs[:lanes]]
                        figures.setdefault((name, lanes), []).append(measure(argv, env, repo))
            off1 = [w for w, _, _ in figures[("off", 1)]]
            off8 = [w for w, _, _ in figures[("off", LANES)]]
            off_lane = max((statistics.median(off8) - statistics.median(off1)) / (LANES - 1),
                           1e-4)
            off_cpu_lane = max((statistics.median(c for _, (c, _), _ in figures[("off", LANES)]) -
                                statistics.median(c for _, (c, _), _ in figures[("off", 1)]))
                               / (LANES - 1), 1e-4)
            for name, _, _ in MODES:
                one, many = figures[(name, 1)], figures[(name, LANES)]
                wall1 = statistics.median(w for w, _, _ in one)
                wall8 = statistics.median(w for w, _, _ in many)
                cpu1 = statistics.median(c for _, (c, _), _ in one)
                cpu8 = statistics.median(c for _, (c, _), _ in many)
                sys8 = statistics.median(s for _, (_, s), _ in many)
                rss8 = max(r for _, _, r in many)
                per_lane = (wall8 - wall1) / (LANES - 1)
                per_cpu = (cpu8 - cpu1) / (LANES - 1)
                print(f"{size:>7} files {name:17} 1 lane {wall1 * 1000:8.1f} ms "
                      f"8 lanes {wall8 * 1000:8.1f} ms wall, {cpu8 * 1000:8.1f} ms CPU "
                      f"({sys8 * 1000:.0f} system), "
                      f"{rss8:6.1f} MiB peak; per added lane {per_lane * 1000:7.1f} ms wall "
                      f"({per_lane / off_lane:5.1f}x off), {per_cpu * 1000:7.1f} ms CPU "
                      f"({per_cpu / off_cpu_lane:5.1f}x off)")
            shutil.rmtree(repo)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
