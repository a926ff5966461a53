#!/usr/bin/env bash
# Regenerates BENCHMARKS.md: in-process stages (cargo bench) and whole-process figures.
# Usage: bash bench/run.sh            (from the repository root; takes a few minutes)
#        bash bench/run.sh overhead   (quick: only the host overhead per lane, printed; writes
#                                      no BENCHMARKS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p gsd-lane
# Wherever cargo puts its output (CARGO_TARGET_DIR, build.target-dir), as examples/demo.sh does.
target=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
bin="$target/release/gsd-lane"
if [ "${1:-}" = overhead ]; then
  python3 bench/lane_overhead.py "$bin" "${2:-15}"
  exit 0
fi
cargo bench --locked -p gsd-lane --bench registry | tee "$target"/bench-registry.txt
cargo bench --locked -p gsd-lane --bench stages | tee "$target"/bench-stages.txt
cargo bench --locked -p gsd-lane --bench http_memory | tee "$target"/bench-http-memory.txt
cargo bench --locked -p gsd-lane --bench verdict | tee "$target"/bench-verdict.txt
{
  for n in 4 8; do
    GSD_LANE_BIN="$bin" bash examples/bench-review.sh "$n" 2
  done
} | tee "$target"/bench-review.txt
if [ -f tests/fixtures/handlers/latency.py ]; then
  python3 tests/fixtures/handlers/latency.py "$bin" 20 | tee "$target"/bench-antigravity.txt
fi
python3 bench/sandbox_cost.py "$bin" 30 | tee "$target"/bench-sandbox.txt
python3 bench/detect_cost.py "$bin" 3 | tee "$target"/bench-detect.txt
python3 bench/lane_overhead.py "$bin" 60 | tee "$target"/bench-overhead.txt
python3 bench/review_stream.py "$bin" | tee "$target"/bench-stream.txt
# Lanes 1-128, doctor over overlays, recorded runs, run's start (the small scale: the full one,
# 10,000 overlays, takes tens of minutes; run `python3 bench/scale.py "$bin"` for it).
GSD_BENCH_SCALE=small python3 bench/scale.py "$bin" | tee "$target"/bench-scale.txt
# Written aside and moved into place, so a failed run leaves the committed figures alone.
python3 bench/whole_process.py "$bin" "$target" > "$target/BENCHMARKS.md.new"
mv "$target/BENCHMARKS.md.new" BENCHMARKS.md
echo "wrote BENCHMARKS.md"
