#!/usr/bin/env bash
# Window overhead against the fake NVML, in the same run on the same library:
# the C++ library, a Python ctypes loop doing the Python Zeus's per-window NVML
# calls, the Python Zeus's own ZeusMonitor when ZEUS_UPSTREAM_SRC names a
# checkout of it (bench/python_zeus_peer.py says what it needs), and zeuscpp
# from Python (plus its import time and power-monitor cost).
#   [ZEUS_UPSTREAM_SRC=DIR] bash bench/compare_window_overhead.sh [BUILD_DIR]
set -euo pipefail
BUILD=${1:-build}
LIB="$BUILD/tests/fakes/nvml/libnvidia-ml.so.1"
PYTHON=${PYTHON:-/usr/bin/python3}
"$BUILD/bin/bench_monitor" --benchmark_filter=BM_WindowFakeNvml
"$PYTHON" "$(dirname "$0")/python_window_peer.py" "$LIB" 1 8
if [ -n "${ZEUS_UPSTREAM_SRC:-}" ]; then
  "$PYTHON" -W ignore "$(dirname "$0")/python_zeus_peer.py" "$LIB" 1 8
fi
if [ -d "$BUILD/python/zeuscpp" ]; then
  PYTHONPATH="$BUILD/python" "$PYTHON" "$(dirname "$0")/python_bench.py" "$LIB"
fi
