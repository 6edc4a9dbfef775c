#!/usr/bin/env bash
# zeusd's CPU with the attribution ledger on (1 s polls) against off, in the
# same run: each daemon serves the fake NVML's two GPUs and a fake RAPL tree
# for SECONDS, idle otherwise; the CPU time (utime + stime) it used is read
# from /proc at the end. Goal: the ledger adds <= 0.5 % of a core.
#   bench/attribution_cpu.sh build [seconds] [rounds]
set -euo pipefail
build=${1:?usage: attribution_cpu.sh BUILD_DIR [seconds] [rounds]}
seconds=${2:-60}
rounds=${3:-3}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/powercap/intel-rapl/intel-rapl:0"
echo package-0 >"$work/powercap/intel-rapl/intel-rapl:0/name"
echo 1000000 >"$work/powercap/intel-rapl/intel-rapl:0/energy_uj"
echo 262143328850 >"$work/powercap/intel-rapl/intel-rapl:0/max_energy_range_uj"
echo 1 >"$work/powercap/intel-rapl/intel-rapl:0/enabled"
ln -s "intel-rapl/intel-rapl:0" "$work/powercap/intel-rapl:0"
ticks=$(getconf CLK_TCK)
cpu_of() { awk -v t="$ticks" '{ s = substr($0, index($0, ") ") + 2); split(s, f, " "); print (f[12] + f[13]) / t }' "/proc/$1/stat"; }
run() {  # $1: extra flags; prints CPU seconds used over the run
  ZEUS_NVML_LIBRARY="$build/tests/fakes/nvml/libnvidia-ml.so.1" \
    ZEUS_POWERCAP_ROOT="$work/powercap" "$build/bin/zeusd" serve --mode uds \
    --socket-path "$work/zeusd.sock" --gpu-backend nvml --metrics-address 127.0.0.1:0 $1 \
    >"$work/log" 2>&1 &
  local pid=$!
  sleep 2
  local start; start=$(cpu_of "$pid")
  sleep "$seconds"
  local end; end=$(cpu_of "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -f "$work/zeusd.sock"
  echo "$start $end" | awk '{ print $2 - $1 }'
}
echo "zeusd CPU over ${seconds} s, attribution on (1 s polls) vs off, $rounds rounds, $(nproc) cores"
for r in $(seq "$rounds"); do
  on=$(run "")
  off=$(run "--no-attribution")
  awk -v on="$on" -v off="$off" -v s="$seconds" -v r="$r" 'BEGIN {
    printf "round %d: on %.3f s (%.3f %% of a core), off %.3f s (%.3f %%), added %.3f %%\n",
      r, on, 100 * on / s, off, 100 * off / s, 100 * (on - off) / s }'
done
