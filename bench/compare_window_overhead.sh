#!/usr/bin/env bash
# Window overhead against the fake NVML, ours vs a Python ctypes loop doing the
# Python Zeus's per-window NVML calls, in the same run on the same library.
#   bash bench/compare_window_overhead.sh [BUILD_DIR]
set -euo pipefail
BUILD=${1:-build}
LIB="$BUILD/tests/fakes/nvml/libnvidia-ml.so.1"
"$BUILD/bin/bench_monitor" --benchmark_filter=BM_WindowFakeNvml
python3 "$(dirname "$0")/python_window_peer.py" "$LIB" 1 8
