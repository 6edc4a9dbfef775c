#!/usr/bin/env bash
# Runs every benchmark binary (`make bench`). Results are recorded by hand in
# docs/benchmarks.md with the machine they ran on.
set -euo pipefail
BUILD=${1:-build}
for b in "$BUILD"/bin/bench_*; do
  [ -x "$b" ] || continue
  echo "== $b"
  "$b"
done
