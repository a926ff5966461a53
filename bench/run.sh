#!/usr/bin/env bash
# Regenerates BENCHMARKS.md: in-process stages (cargo bench) and whole-process figures.
# Usage: bash bench/run.sh            (from the repository root; takes a few minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p gsd-lane
cargo bench --locked -p gsd-lane --bench registry | tee target/bench-registry.txt
cargo bench --locked -p gsd-lane --bench stages | tee target/bench-stages.txt
cargo bench --locked -p gsd-lane --bench http_memory | tee target/bench-http-memory.txt
{
  for n in 4 8; do
    GSD_LANE_BIN=target/release/gsd-lane bash examples/bench-review.sh "$n" 2
  done
} | tee target/bench-review.txt
if [ -f tests/fixtures/handlers/latency.py ]; then
  python3 tests/fixtures/handlers/latency.py target/release/gsd-lane 20 | tee target/bench-antigravity.txt
fi
python3 bench/sandbox_cost.py target/release/gsd-lane 30 | tee target/bench-sandbox.txt
python3 bench/whole_process.py target/release/gsd-lane target > BENCHMARKS.md
echo "wrote BENCHMARKS.md"
