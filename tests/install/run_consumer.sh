#!/usr/bin/env bash
# The installed library as a user gets it (ctest: install_consumer):
#  1. `cmake --install BUILD` into a fresh prefix;
#  2. no path of the build or source tree in the installed CMake package or
#     zeus.pc (they must work wherever the prefix goes);
#  3. tests/install/consumer configured with find_package(Zeus) against that
#     prefix, built and run (a window on the simulated GPU);
#  4. the pkg-config route: the same program compiled with
#     `pkg-config --cflags --libs zeus-monitor`;
#  5. the prefix moved elsewhere, and the installed `zeus` still finds its
#     data there (zeus::data_dir: <bin>/../share/zeus), not in the source tree.
#
#   tests/install/run_consumer.sh BUILD_DIR [WORK_DIR]
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-$(mktemp -d)}
trap 'rm -rf "$work"' EXIT
version=$(sed -n 's/^project(zeus_cpp VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

step() { echo "== install test: $*"; }

step "cmake --install into $work/a/usr"
cmake --install "$build" --prefix "$work/a/usr" >"$work/install.log"
for f in include/zeus/monitor/energy_monitor.h lib/cmake/Zeus/ZeusConfig.cmake \
  lib/cmake/Zeus/ZeusTargets.cmake lib/pkgconfig/zeus.pc lib/libzeus_monitor.a bin/zeus \
  share/zeus/zeus-traces; do
  [ -e "$work/a/usr/$f" ] || { echo "missing from the install: $f" >&2; exit 1; }
done
# Private headers (src/) never ship.
if [ -d "$work/a/usr/include/device" ] || [ -n "$(find "$work/a/usr/include" -path '*/nvml/*_api.h')" ]; then
  echo "private headers were installed" >&2
  exit 1
fi

step "no build- or source-tree paths in the CMake package or zeus.pc"
if grep -rl -e "$build" -e "$src/" "$work/a/usr/lib/cmake" "$work/a/usr/lib/pkgconfig"; then
  echo "the files above name the build or source tree" >&2
  exit 1
fi

step "find_package(Zeus) consumer"
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/a/usr" -DCMAKE_BUILD_TYPE=Release >"$work/consumer.log" ||
  { cat "$work/consumer.log"; exit 1; }
cmake --build "$work/consumer" >>"$work/consumer.log" || { cat "$work/consumer.log"; exit 1; }
"$work/consumer/measure_sim"

step "pkg-config consumer (zeus-monitor.pc)"
export PKG_CONFIG_PATH="$work/a/usr/lib/pkgconfig"
[ "$(pkg-config --modversion zeus-monitor)" = "$version" ] || { echo "zeus-monitor.pc: wrong version" >&2; exit 1; }
# shellcheck disable=SC2046
c++ -o "$work/pc_measure_sim" "$src/tests/install/consumer/measure_sim.cc" \
  $(pkg-config --define-prefix --cflags --libs zeus-monitor)
"$work/pc_measure_sim"

step "the installed zeus finds its data after the prefix moves"
mv "$work/a" "$work/b"
out=$(env -u ZEUS_DATA_DIR "$work/b/usr/bin/zeus" simulate --gpu v100 --workload cifar100 \
  --eta 0.5 --seeds 1 --strategy zeus --format csv 2>&1) || { echo "$out" >&2; exit 1; }
echo "$out" | head -3
echo "== install test: passed"
