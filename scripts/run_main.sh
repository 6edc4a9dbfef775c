#!/usr/bin/env bash
# The main job (`make run`): report the environment, then measure a bundled
# workload, then run the power-limit optimizer example. Never changes the
# settings of a real GPU: with real GPUs the optimizer runs in dry-run mode.
set -euo pipefail
BUILD=${1:-build}
BIN="$BUILD/bin"

echo "== zeus show-env"
"$BIN/zeus" show-env

real_gpus=0
if "$BIN/zeus" show-env --json | grep -q '"gpu_backend": "nvml"'; then
  real_gpus=1
fi
if [ "$real_gpus" = 0 ] && [ -z "${ZEUS_GPU_BACKEND:-}" ]; then
  echo
  echo "No NVIDIA GPU found: the GPU measurements below use the SIMULATED GPU (ZEUS_GPU_BACKEND=sim)."
  export ZEUS_GPU_BACKEND=sim
fi

echo
echo "== zeus monitor energy -- example_workload --seconds 2"
"$BIN/zeus" monitor energy -- "$BIN/example_workload" --seconds 2

echo
if [ "$real_gpus" = 1 ]; then
  echo "== zeus power-limit --gpu-backend nvml (real GPU present: dry run, settings never change)"
  "$BIN/zeus" power-limit --gpu-backend nvml --warmup-steps 1 --profile-steps 2 --pl-step 50 \
    -- "$BIN/example_workload" --seconds 0.5
else
  echo "== zeus power-limit (simulated GPU, simulated time)"
  "$BIN/zeus" power-limit
fi

if [ -x "$BIN/example_bso_recurring_jobs" ]; then
  echo
  echo "== zeus bso serve + example_bso_recurring_jobs (the batch-size optimizer service, simulated GPUs)"
  bso_dir=$(mktemp -d)
  "$BIN/zeus" bso serve --port 0 --port-file "$bso_dir/port" \
    --database-url "sqlite:///$bso_dir/bso.db" --log-level warning &
  bso_pid=$!
  for _ in $(seq 100); do [ -s "$bso_dir/port" ] && break; sleep 0.1; done
  "$BIN/example_bso_recurring_jobs" --url "http://127.0.0.1:$(cat "$bso_dir/port")" --jobs 3 --recurrences 30
  kill -TERM "$bso_pid"
  wait "$bso_pid" && echo "zeus bso serve stopped cleanly (exit 0)"
  rm -rf "$bso_dir"
fi
