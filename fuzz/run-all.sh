#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 600) and prints a Markdown table of executions
# and findings. Needs cargo-fuzz (`cargo install cargo-fuzz`); on a stable toolchain the
# sanitizer flags are enabled with RUSTC_BOOTSTRAP=1.
# Usage: bash fuzz/run-all.sh [SECONDS] [PARALLEL]
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-600}"
parallel="${2:-2}"
export RUSTC_BOOTSTRAP=1
targets=$(cargo fuzz list)
cargo fuzz build -O
mkdir -p logs
printf '%s\n' $targets | xargs -P "$parallel" -I{} bash -c "mkdir -p corpus/{}; cargo fuzz run -O {} corpus/{} -- -max_total_time=$seconds -rss_limit_mb=2048 >/dev/null 2>logs/{}.log || true"
echo "| Target | Seconds | Executions | Corpus | Crashes |"
echo "|---|---|---|---|---|"
for target in $targets; do
    runs=$(grep -Eo 'Done [0-9]+ runs' "logs/$target.log" | grep -Eo '[0-9]+' | tail -1 || true)
    corpus=$(find "corpus/$target" -type f | wc -l)
    crashes=$(find "artifacts/$target" -type f 2>/dev/null | wc -l)
    echo "| $target | $seconds | ${runs:-?} | $corpus | $crashes |"
done
