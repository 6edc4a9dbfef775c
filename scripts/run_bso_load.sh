#!/usr/bin/env bash
# The full bso-w1 load test (`make bench-bso`): steady mode with 1, 8 and 32
# clients, cold mode with 32, and the crash mode (8 clients, 90 s, kill -9 at
# +20/+40/+60 s). Server and clients are pinned to one core each. Prints the
# table rows of docs/benchmarks.md ("BSO service").
set -euo pipefail
BUILD=${1:-build}
BIN="$BUILD/bin"
DURATION=${BSO_LOAD_DURATION:-60}
echo "bso_load on $(nproc) cores, $(uname -r); fsync latency of the temp dir:"
python3 - <<'PY' 2>/dev/null || true
import os, tempfile, time
fd, p = tempfile.mkstemp(); ts = []
for _ in range(100):
    os.write(fd, b"x" * 4096); t = time.perf_counter(); os.fsync(fd); ts.append(time.perf_counter() - t)
os.close(fd); os.unlink(p); ts.sort()
print("  fsync p50 %.2f ms, p99 %.2f ms" % (ts[50] * 1e3, ts[98] * 1e3))
PY
for n in 1 8 32; do
  echo "== steady, $n client(s)"
  "$BIN/bso_load" --mode steady --clients "$n" --duration "$DURATION"
done
echo "== cold, 32 clients"
"$BIN/bso_load" --mode cold --clients 32 --duration "$DURATION"
echo "== crash, 8 clients, 90 s, kill -9 at +20, +40, +60 s"
"$BIN/bso_load" --mode crash --clients 8 --duration 90 --kill-at 20,40,60 --restart-delay 2
