#!/usr/bin/env python3
"""Extra cost per spawn of the lane sandbox: `gsd-lane run` of a lane that exits at once, under
`--sandbox off`, `detect` and `enforce`, runs interleaved so drift hits every mode alike.

Usage: python3 bench/sandbox_cost.py <gsd-lane binary> [runs]

Two repositories: a small one (the project directory alone) and one with 5,000 files, which is
what the detection walk pays for. Prints one line per mode and repository, then the median of
paired differences against `off`.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def write_lane(home, bindir, slug):
    path = os.path.join(bindir, slug)
    with open(path, "w") as f:
        f.write("#!/bin/sh\ncat >/dev/null; echo ok\n")
    os.chmod(path, 0o755)
    cap = os.path.join(home, ".gsd", "capabilities", slug)
    os.makedirs(cap, exist_ok=True)
    manifest = {
        "id": slug, "role": "reviewer", "version": "1.0.0", "title": slug,
        "description": "Benchmark lane.", "tier": "full", "requires": [],
        "reviewer": {
            "slug": slug, "flags": ["--" + slug], "transport": "spawn",
            "probe": {"kind": "command-exists", "binary": slug},
            "invoke": {"binary": slug, "args": ["-"], "promptChannel": "stdin",
                       "outputChannel": "stdout", "modelArg": None, "effortChannel": "none"},
            "timeoutFloorMs": 900000, "emptyOutput": "stub-with-stderr",
            "reviewsSection": slug.title(), "evidenceClass": "source-grounded",
            "requiresBinaries": [], "promptBudgetKey": None, "handler": None,
        },
    }
    with open(os.path.join(cap, "capability.json"), "w") as f:
        json.dump(manifest, f)


def once(argv, env, cwd):
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{argv} exited {done.returncode}")
    return elapsed


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
          f"{sum(len(os.listdir(d)) for d in ('/', os.path.dirname(work), work))}")
    for name, repo in (("small repository", small), ("5,000-file repository", large)):
        times = {mode: [] for mode in modes}
        for _ in range(runs):
            for mode in modes:
                run_dir = os.path.join(work, "run")
                argv = [gsd, "run", "quick", "--run-dir", run_dir, "--prompt-file", prompt,
                        "--repo-root", repo, "--sandbox", mode, "--json"]
                times[mode].append(once(argv, env, repo))
        for mode in modes:
            t = times[mode]
            print(f"{name:24} {mode:8} median {statistics.median(t) * 1000:7.2f} ms   "
                  f"min {min(t) * 1000:7.2f}   max {max(t) * 1000:7.2f}   (n={runs})")
        for mode in ("detect", "enforce"):
            diffs = [a - b for a, b in zip(times[mode], times["off"])]
            print(f"{name:24} {mode} - off: median of paired differences "
                  f"{statistics.median(diffs) * 1000:.2f} ms")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
