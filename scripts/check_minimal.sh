#!/usr/bin/env bash
# Checks a build of the measurement-only configuration (make build-minimal,
# ZEUS_MINIMAL=ON): none of the service libraries is linked into its programs
# or its Python module, its parts do not include their headers, and its
# commands work: show-env, monitor energy on the simulated GPU, power-limit,
# and the clear refusals where a service would be needed.
#
#   scripts/check_minimal.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
zeus=$build/bin/zeus
step() { echo "== minimal: $*"; }

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

step "the services say they are not built"
set +e
out=$(ZEUSD_SOCK_PATH=/nonexistent.sock "$zeus" show-env 2>&1)
rc=$?
set -e
echo "$out" | grep -q "no HTTP client" || { echo "show-env with ZEUSD_SOCK_PATH: $out (exit $rc)" >&2; exit 1; }
echo "  ZEUSD_SOCK_PATH: refused, exit $rc"
if "$zeus" bso --help >/dev/null 2>&1; then
  echo "zeus bso exists in the minimal build" >&2
  exit 1
fi
for offline in simulate perseus; do
  if "$zeus" "$offline" --help >/dev/null 2>&1; then
    echo "zeus $offline exists in the minimal build (ZEUS_WITH_SIM/ZEUS_WITH_PERSEUS are off)" >&2
    exit 1
  fi
done
echo "  zeus bso, simulate, perseus: not built"

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
