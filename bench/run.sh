#!/usr/bin/env bash
# Regenerates BENCHMARKS.md: in-process stages (cargo bench) and whole-process figures.
# Usage: bash bench/run.sh            (from the repository root; takes a few minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p gsd-lane
cargo bench --locked -p gsd-lane --bench registry | tee target/bench-registry.txt
python3 bench/whole_process.py target/release/gsd-lane target/bench-registry.txt > BENCHMARKS.md
echo "wrote BENCHMARKS.md"
