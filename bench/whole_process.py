#!/usr/bin/env python3
"""Whole-process benchmarks for gsd-lane; prints BENCHMARKS.md on stdout.

Each figure is the median of repeated runs with its spread (min..max), and, where it makes
sense, a ratio against a baseline measured in the same run (spawning /bin/true, or the same
lane's binary spawned directly), because absolute times on a shared machine drift.
Peak RSS comes from wait4() of the measured process itself.
"""
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import write_lane

GSD = os.path.abspath(sys.argv[1])
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None


# What the figures of a section mean; printed after it. Kept free of numbers, which go stale.
NOTES = {
    "bench-verdict.txt": """
The whole verdict (`compute`: CommonMark parse, sections, risk, concerns, citations, the
repository check reading each of the 100 cited files once, quorum, agreed places) of a generated
REVIEWS.md: five reviewer sections of prose, bullet lists, fenced code holding look-alike tokens
and a table every 20 blocks, 200 cited concerns each. Thread CPU time is what the computation
used whatever else the machine runs; wall time includes waiting for a CPU. Peak RSS growth is
the rise of `VmHWM` over one computation, the document already in memory.
""",
    "bench-stream.txt": """
Each output size runs three commands back to back per round: the lane's own pipeline writing
the file (the floor), `gsd-lane run` of the lane, and `gsd-lane review --phase 3` of it; the
ratios are of medians from the same rounds. Peak RSS is `wait4`'s of the gsd-lane process.
`review` reads the review file once (hashing every byte) and copies it beside REVIEWS.md, so
it pays the file about twice more than `run`; what REVIEWS.md shows is bounded by
`review.max_inline_bytes` (2 MiB), whose rendering (nesting, the panel verdict) is a fixed
cost of about a second here, and which bounds the memory.
""",
    "bench-overhead.txt": """
"Marginal" is what one more lane adds to a review, (T(8 lanes) - T(1 lane)) / 7, minus the lane
alone; "amortised" also spreads review's one-time work (phase, prompt, run dir, REVIEWS.md) over
8 lanes. Each overhead is the median over rounds of that round's own difference (one round runs
every command back to back), so drift between rounds cancels out. CPU is user + system of the whole process tree (`getrusage`); on this shared machine it
is steadier than wall time.

Where the time goes (`valgrind --tool=callgrind` instruction counts, `perf stat`):

- gsd-lane's own start ("gsd-lane start alone": the binary started with no work, its watchdog
  mode on an empty input) is the floor of every gsd-lane command: the kernel's exec, the dynamic
  loader (libc, libm, libgcc_s) and the standard library's start-up. `run` pays all of it over
  the lane spawned directly, which is why `run` cannot reach the 1 ms target on a machine whose
  floor is above it. A statically linked build (`RUSTFLAGS="-C target-feature=+crt-static"`
  with an explicit `--target`) starts faster; it is not the default, because an explicit
  target moves the build output and static glibc loads its name-service modules at run time.
- `run`'s work in the process: the command line (clap), the first-party manifests (parsed once
  per process; not validated at start, since a test proves they validate clean), the overlays,
  planning, probing, and writing the review and sidecar files.
- One lane watchdog per gsd-lane process (gsd-lane re-executed, `__lane-watchdog`) keeps lanes
  from outliving gsd-lane. It is started on a thread of its own as soon as a command knows it
  will start a process, so its start overlaps with the command's own work; a review's lanes all
  share it, so one more lane adds only its own spawn and bookkeeping.
- Under `enforce`: one Landlock rule per entry of the repository's ancestor directories (the
  "entries" line above; the bench's repository sits in a busy `/tmp`, a repository under `$HOME`
  has far fewer). The ruleset is built once per process and repository, so `run` pays it once
  and a review once for all its lanes; each lane then pays the kernel's copy of the rules into
  its domain and the before/after walk of the repository.
""",
}


def run_once(argv, env=None, cwd=None, stdin=None):
    """Runs argv; returns (seconds, peak RSS KiB, exit status).

    Time is measured around the process itself. Peak RSS comes from a second, separate run
    under /usr/bin/time (a forked Python child would report Python's own pages).
    """
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=stdin or subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.wait()
    elapsed = time.perf_counter() - start
    return elapsed, peak_rss(argv, env, cwd, stdin), proc.returncode


def peak_rss(argv, env, cwd, stdin):
    """Peak RSS in KiB of argv, measured by /usr/bin/time (0 when it is not installed)."""
    if not os.path.exists("/usr/bin/time"):
        return 0
    if stdin is not None and hasattr(stdin, "seek"):
        stdin.seek(0)
    done = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, env=env, cwd=cwd,
                          stdin=stdin or subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    lines = done.stderr.strip().splitlines()
    try:
        return int(lines[-1])
    except (IndexError, ValueError):
        return 0


def measure(argv, runs, env=None, cwd=None, stdin=None):
    times = []
    for _ in range(runs):
        if stdin is not None:
            stdin.seek(0)
        start = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, stdin=stdin or subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times), peak_rss(argv, env, cwd, stdin)


def ms(seconds):
    return f"{seconds * 1000:.2f} ms"


def main():
    rows = []
    work = tempfile.mkdtemp(prefix="gsd-bench-")
    home = os.path.join(work, "home")
    bindir = os.path.join(work, "bin")
    proj = os.path.join(work, "proj")
    for d in (home, bindir, os.path.join(proj, ".planning")):
        os.makedirs(d, exist_ok=True)
    env = {"PATH": bindir + ":/usr/bin:/bin", "HOME": home, "GSD_HOME": home}
    runs = 30

    base = measure(["/bin/true"], runs)
    rows.append(("spawn /bin/true (baseline)", base, None))
    for name, argv in [
        ("gsd-lane flags", [GSD, "flags"]),
        ("gsd-lane sections", [GSD, "sections"]),
        ("gsd-lane plan (all 12 lanes)", [GSD, "plan", "--run-dir", "/run", "--repo-root", "/repo"]),
        ("gsd-lane list", [GSD, "list"]),
        ("gsd-lane disclose (all lanes)", [GSD, "disclose"]),
    ]:
        result = measure(argv, runs, env=env, cwd=proj)
        rows.append((name, result, base))

    quick = write_lane(home, bindir, "quick", "cat >/dev/null; echo ok")
    prompt = os.path.join(work, "prompt.md")
    with open(prompt, "w") as f:
        f.write("# Plan\n" * 100)
    direct = measure([quick, "-"], runs, env=env, stdin=open(prompt, "rb"))
    rows.append(("lane binary spawned directly", direct, base))
    run_dir = os.path.join(work, "run")
    gsd_run = measure([GSD, "run", "quick", "--run-dir", run_dir, "--prompt-file", prompt, "--json"],
                      runs, env=env, cwd=proj)
    rows.append(("gsd-lane run quick (exits at once)", gsd_run, direct))

    write_lane(home, bindir, "gib", "head -c 1073741824 /dev/zero | tr '\\0' 'a'")
    t, rss, status = run_once([GSD, "run", "gib", "--run-dir", run_dir, "--prompt-file", prompt, "--json"],
                              env=env, cwd=proj)
    # The same lane's program alone, for the throughput baseline (disk speed of this machine).
    t_direct, _, _ = run_once(["sh", "-c", "head -c 1073741824 /dev/zero | tr '\\0' 'a' > " + os.path.join(run_dir, "direct.out")], env=env)
    os.remove(os.path.join(run_dir, "direct.out"))
    size = os.path.getsize(os.path.join(run_dir, "gsd-review-gib.md"))
    gib_row = (t, rss, size, status, t_direct)

    print("# Benchmarks\n")
    print(f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}")
    print(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("- command: `bash bench/run.sh` (release build)")
    print(f"- whole-process figures: median of {runs} runs, spread min..max, ratio against the baseline named\n")
    print("| What | Median | Spread | Peak RSS | Ratio |")
    print("|---|---|---|---|---|")
    for name, (med, lo, hi, rss), ref in rows:
        ratio = f"{med / ref[0]:.2f}x" if ref else "1.00x"
        print(f"| {name} | {ms(med)} | {ms(lo)}..{ms(hi)} | {rss / 1024:.1f} MiB | {ratio} |")
    overhead = gsd_run[0] - direct[0]
    print(f"\nHost overhead of `gsd-lane run` over spawning the lane directly: {ms(overhead)} (median difference).\n")
    t, rss, size, status, t_direct = gib_row
    print("| Lane printing 1 GiB | Wall | Throughput | Peak RSS of gsd-lane | Review file | Ratio to the bare pipeline writing the same file |")
    print("|---|---|---|---|---|---|")
    print(f"| `run gib` (exit {status}) | {t:.2f} s | {size / t / 2**20:.0f} MiB/s | {rss / 1024:.1f} MiB | {size} bytes | {t / t_direct:.2f}x ({t_direct:.2f} s) |")
    sections = [
        ("bench-registry.txt", "In-process: registry load + validation (`cargo bench --bench registry`)", "median"),
        ("bench-stages.txt", "In-process: plan, signature, egress check (`cargo bench --bench stages`)", "µs"),
        ("bench-http-memory.txt", "HTTP engine against hostile responses, http and https (`cargo bench --bench http_memory`)", " "),
        ("bench-verdict.txt", "Panel verdict of a 10 MB REVIEWS.md with 1,000 citations (`cargo bench --bench verdict`)", "verdict"),
        ("bench-review.txt", "Review of N lanes each taking S seconds (`examples/bench-review.sh N S`)", "N="),
        ("bench-antigravity.txt", "Antigravity handler overhead over a plain spawn lane (`tests/fixtures/handlers/latency.py`)", ""),
        ("bench-sandbox.txt", "Sandbox cost per spawn: `--sandbox off|detect|enforce` (`bench/sandbox_cost.py`)", ""),
        ("bench-overhead.txt", "Host overhead per lane, `run` and `review --jobs 1`, sandbox enforce and off (`bench/lane_overhead.py`)", ""),
        ("bench-stream.txt", "Streamed reviews: output 1 MiB-1 GiB, plans 10 KB-20 MB (`bench/review_stream.py`)", ""),
    ]
    for name, title, marker in sections:
        path = os.path.join(RESULTS or "", name)
        if RESULTS and os.path.exists(path):
            print(f"\n## {title}\n")
            print("```")
            with open(path) as f:
                for line in f:
                    if marker in line:
                        print(line.rstrip())
            print("```")
            if name in NOTES:
                print("\n" + NOTES[name].strip())
    carry_over_measured_sections({title for _, title, _ in sections})
    shutil.rmtree(work, ignore_errors=True)


def carry_over_measured_sections(generated_titles):
    """Keeps the committed sections this script does not generate: before/after comparisons
    measured against an older build (scale, detection, citation check), which a run of the
    current build alone cannot reproduce. Each is copied as it stands, under its own title."""
    try:
        with open("BENCHMARKS.md") as f:
            text = f.read()
    except OSError:
        return
    for chunk in text.split("\n## ")[1:]:
        title = chunk.split("\n", 1)[0].strip()
        if title not in generated_titles:
            print("\n## " + chunk.rstrip("\n"))


if __name__ == "__main__":
    main()
