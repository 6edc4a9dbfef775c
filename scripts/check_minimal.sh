#!/usr/bin/env bash
# Checks a build of the measurement-only configuration (make build-minimal,
# ZEUS_MINIMAL=ON; pip's default build is this configuration): none of the
# service libraries is linked into its programs or its Python module, its
# parts do not include their headers, and its commands work: show-env,
# monitor energy on the simulated GPU, power-limit; its zeus command and its
# Python module reach a zeusd (ZEUSD: a full build's, serving simulated GPUs
# on a Unix socket in a temporary folder) and change power limits through
# it; and the commands and modules it leaves out say so and how to get them.
#
#   scripts/check_minimal.sh BUILD_DIR [ZEUSD]
set -euo pipefail
build=$(cd "$1" && pwd)
zeusd=${2:-}
zeus=$build/bin/zeus
step() { echo "== minimal: $*"; }
tmp=$(mktemp -d)
zeusd_pid=
cleanup() {
  if [ -n "$zeusd_pid" ]; then kill "$zeusd_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

step "no service library in the programs"
for bin in "$zeus" "$build"/python/zeuscpp/_core*.so; do
  [ -e "$bin" ] || continue
  if ldd "$bin" | grep -E 'libcurl|libsqlite3|libpq|libssl|libcrypto|libmpi|libboost|libgrpc|libprotobuf'; then
    echo "$bin links a service library (above)" >&2
    exit 1
  fi
done
[ ! -e "$build/bin/zeusd" ] || { echo "zeusd was built in the minimal configuration" >&2; exit 1; }
[ ! -e "$build/libzeus_kubernetes.a" ] || { echo "the kubelet client (gRPC) was built in the minimal configuration" >&2; exit 1; }
# No translation unit of the minimal build included Boost, libpqxx, curl, OpenSSL, MPI,
# gRPC or protobuf.
if grep -rhoE '/usr/include/(boost|pqxx|curl|openssl|x86_64-linux-gnu/openmpi|openmpi|grpc|grpcpp|google/protobuf)/' \
  --include='*.d' "$build/CMakeFiles" "$build/python" 2>/dev/null | sort -u | grep .; then
  echo "the minimal build included the headers above" >&2
  exit 1
fi
if [ -f "$build/.ninja_deps" ] && ninja -C "$build" -t deps 2>/dev/null |
  grep -E '/usr/include/(boost|pqxx|curl|openssl|grpc|grpcpp|google/protobuf/|sqlite3\.h)' | sort -u | head -5 | grep .; then
  echo "the minimal build included the headers above" >&2
  exit 1
fi

step "zeus show-env"
"$zeus" show-env | head -8

step "zeus monitor energy on the simulated GPU"
ZEUS_GPU_BACKEND=sim "$zeus" monitor energy -- sleep 0.5

step "zeus power-limit on the simulated GPU"
ZEUS_GPU_BACKEND=sim "$zeus" power-limit --help >/dev/null

step "zeusd: the minimal build's zeus and Python module change power limits through it"
set +e
out=$(ZEUSD_SOCK_PATH=$tmp/nobody.sock "$zeus" show-env 2>&1)
rc=$?
set -e
echo "$out" | grep -q "cannot reach zeusd at $tmp/nobody.sock" ||
  { echo "show-env with ZEUSD_SOCK_PATH and no zeusd there: $out (exit $rc)" >&2; exit 1; }
echo "  no zeusd at ZEUSD_SOCK_PATH: 'cannot reach zeusd', exit $rc"
if [ -z "$zeusd" ] || [ ! -x "$zeusd" ]; then
  echo "  SKIPPED: no zeusd to talk to (make build-minimal passes \$(BUILD)/bin/zeusd once make build has made it)"
else
  sock=$tmp/zeusd.sock
  ZEUS_LOG_LEVEL=error ZEUS_SIM_GPUS=2 "$zeusd" serve --socket-path "$sock" --gpu-backend sim \
    --enable gpu-control,gpu-read &
  zeusd_pid=$!
  for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
  [ -S "$sock" ] || { echo "zeusd did not start on $sock" >&2; exit 1; }
  export ZEUSD_SOCK_PATH=$sock ZEUS_GPU_BACKEND=zeusd
  ZEUS_LOG_LEVEL=error "$zeus" show-env | grep -q "GPUs: backend zeusd" ||
    { echo "zeus show-env does not report zeusd's GPUs" >&2; exit 1; }
  limits() { ZEUS_LOG_LEVEL=error "$zeus" gpu show | grep -o 'power limit [0-9]* W' | tr '\n' ' '; }
  expected="power limit 300 W power limit 250 W "
  ZEUS_LOG_LEVEL=error "$zeus" gpu set --gpus 1 --power-limit 250
  [ "$(limits)" = "$expected" ] || { echo "zeus gpu set through zeusd: $(limits)" >&2; exit 1; }
  echo "  zeus gpu set --power-limit: set through zeusd"
  if [ -d "$build/python/zeuscpp" ]; then
    # A leased change: zeusd restores it when the process (its connection) ends.
    PYTHONPATH="$build/python" /usr/bin/python3 - "$sock" <<'PY'
import sys
from zeuscpp.utils.zeusd import ZeusdClient, ZeusdConfig
client = ZeusdClient(ZeusdConfig.uds(sys.argv[1]))
assert client.get_power_limit() == {0: 300000, 1: 250000}, client.get_power_limit()
client.set_power_limit([0], 150000)
assert client.get_power_limit() == {0: 150000, 1: 250000}, client.get_power_limit()
assert len(client.lease_id) == 32, client.lease_id
PY
    for _ in $(seq 100); do [ "$(limits)" = "$expected" ] && break; sleep 0.05; done
    [ "$(limits)" = "$expected" ] ||
      { echo "the Python process's leased limit was not restored: $(limits)" >&2; exit 1; }
    echo "  zeuscpp.utils.zeusd: a leased limit set, and restored when the process ended"
  fi
  unset ZEUSD_SOCK_PATH ZEUS_GPU_BACKEND
  kill "$zeusd_pid"
  wait "$zeusd_pid"
  zeusd_pid=
fi

step "the commands it leaves out say so and how to get them (exit 2)"
# expect_absent WORD... SWITCH: `zeus WORD... --help` names SWITCH.
expect_absent() {
  local needs=${*: -1}
  set -- "${@:1:$#-1}"
  set +e
  out=$("$zeus" "$@" --help 2>&1)
  rc=$?
  set -e
  if [ $rc -ne 2 ] || ! echo "$out" | grep -q "is not in this build (built without .*$needs.*); to get it: "; then
    echo "zeus $*: exit $rc: $out" >&2
    exit 1
  fi
}
expect_absent simulate ZEUS_WITH_SIM
expect_absent simulate chase ZEUS_WITH_SIM
expect_absent perseus ZEUS_WITH_PERSEUS
expect_absent perseus serve ZEUS_WITH_PERSEUS
expect_absent bso ZEUS_WITH_BSO_SERVER
expect_absent proxy ZEUS_WITH_HTTP
set +e
out=$("$zeus" bogus 2>&1)
rc=$?
set -e
{ [ $rc -eq 2 ] && echo "$out" | grep -q "unknown command 'bogus'"; } ||
  { echo "zeus bogus: exit $rc: $out" >&2; exit 1; }
"$zeus" simulate 2>&1 | sed 's/^/  /' || true

step "the module's missing parts fail to import with a clear message"
for module in zeuscpp.metric zeuscpp.optimizer.batch_size.client zeuscpp._legacy.simulate \
  zeuscpp.optimizer.pipeline_frequency; do
  set +e
  out=$(PYTHONPATH="$build/python" /usr/bin/python3 -c "import $module" 2>&1)
  rc=$?
  set -e
  if [ -d "$build/python/zeuscpp" ] && ! { [ $rc -ne 0 ] && echo "$out" | grep -q "is not in this build of zeuscpp: it needs"; }; then
    echo "import $module (exit $rc): $out" >&2
    exit 1
  fi
done
PYTHONPATH="$build/python" /usr/bin/python3 -c "import zeuscpp.metric" 2>&1 | tail -1 || true
echo "== minimal: passed"
