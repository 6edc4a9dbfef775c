#!/usr/bin/env bash
# The README's newcomer path after the install, timed: the environment
# report, a first measurement, and zeusd's first metrics scrape (from its
# start to the first 200 on /metrics). On a machine without GPUs each step
# uses the simulated GPU, as `make run` does. The install itself is timed by
# the package test (scripts/package_test.sh prints its stages).
#   bash bench/newcomer_path.sh [BUILD_DIR]
set -euo pipefail
BUILD=${1:-build}
BIN="$BUILD/bin"
dir=$(mktemp -d)
zeusd_pid=
cleanup() {
  [ -n "$zeusd_pid" ] && kill "$zeusd_pid" 2>/dev/null && wait "$zeusd_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

now() { date +%s.%N; }
step() {
  local name=$1
  shift
  local t0
  t0=$(now)
  "$@" >"$dir/out" 2>&1 || { cat "$dir/out"; echo "newcomer path: '$name' failed" >&2; exit 1; }
  printf '%-38s %6.3f s\n' "$name" "$(awk -v a="$(now)" -v b="$t0" 'BEGIN { print a - b }')"
}

export ZEUS_GPU_BACKEND=${ZEUS_GPU_BACKEND:-sim}
step "zeus show-env" "$BIN/zeus" show-env
step "zeus monitor energy -- sleep 1" "$BIN/zeus" monitor energy -- sleep 1

port=$(( 20000 + RANDOM % 20000 ))
t0=$(now)
"$BIN/zeusd" serve --socket-path "$dir/zeusd.sock" --gpu-backend "$ZEUS_GPU_BACKEND" \
  --metrics-address "127.0.0.1:$port" >"$dir/zeusd.log" 2>&1 &
zeusd_pid=$!
for _ in $(seq 1 500); do
  if curl -fsS "http://127.0.0.1:$port/metrics" -o "$dir/metrics" 2>/dev/null; then break; fi
  sleep 0.01
done
[ -s "$dir/metrics" ] || { cat "$dir/zeusd.log"; echo "newcomer path: no scrape" >&2; exit 1; }
printf '%-38s %6.3f s (%d series)\n' "zeusd start to first /metrics scrape" \
  "$(awk -v a="$(now)" -v b="$t0" 'BEGIN { print a - b }')" "$(grep -vc '^#' "$dir/metrics")"
