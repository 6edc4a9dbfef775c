# Entry points. Each target installs what it needs (scripts/setup.sh, apt-get,
# idempotent), configures and builds, then does its job.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
PKG_BUILD  ?= build-pkg
MIN_BUILD  ?= build-minimal
FUZZ_SECONDS ?= 600
JOBS       ?= 2
CMAKE_ARGS ?=
# Every build here needs line tables (sanitizer reports, backtraces), not full
# debug info: -g1 compiles and links markedly faster, and the plain, minimal
# and package builds share ccache entries only when their flags match. For a
# debugger session: make build CMAKE_ARGS="-DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 -g -DNDEBUG'" BUILD=build-debug.
LINE_TABLES := -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
LAUNCHER   := $(shell command -v ccache >/dev/null 2>&1 && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# ccache hits for a clone in another folder (CI clones afresh): paths under the
# checkout are hashed relative to it, and the working directory is not hashed.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
export CCACHE_MAXSIZE ?= 20G

.PHONY: all setup build run test test-asan test-tsan fuzz fuzz-asan bench bench-bso format format-check clean \
  build-minimal package package-test

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja: | setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(LINE_TABLES) $(LAUNCHER) $(CMAKE_ARGS) >/dev/null

build: setup $(BUILD)/build.ninja
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: environment report, then an energy measurement of a bundled workload.
run: build
	@bash scripts/run_main.sh $(BUILD)

test: build
	@ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure --timeout 120

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer, the
# benchmarks' short versions included (ctest's bench_smoke.*: a benchmark that
# reads freed memory fails here; docs/benchmarks.md), built with clang: at -O0 it compiles this code faster than GCC (2270 s of CPU
# with the fuzz instrumentation against GCC's 2716 s without; the heaviest
# files in half the time), and the same build links the fuzz targets with
# libFuzzer (make fuzz-asan), so CI compiles the sanitized library once. With GCC instead (no fuzz targets):
# make test-asan CMAKE_ARGS="-DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ -DZEUS_LIBFUZZER=OFF".
ASAN_CONFIGURE = cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DZEUS_SANITIZE=ON -DZEUS_LIBFUZZER=ON \
  -DZEUS_BUILD_BENCHMARKS=ON $(LINE_TABLES) $(LAUNCHER) $(CMAKE_ARGS) >/dev/null
test-asan: setup
	@$(ASAN_CONFIGURE)
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) -j $(JOBS) --output-on-failure --timeout 300

# The threaded parts under ThreadSanitizer: the energy and power monitors,
# the RAPL keep-alive, the settings guard, the clock's waits, and zeusd's
# in-process parts (device workers, leases, HTTP server, streams). Only those
# test binaries (and what they link) are built, to keep it small. zeusd's
# tests that run the daemon as a child process are left out: TSan defers a
# signal until the receiving thread makes an intercepted call, and a thread
# waiting on a std::future (a raw futex) never does, so SIGTERM is not seen.
# -O1, as ThreadSanitizer's documentation allows: a third less to compile, and
# these suites are short.
TSAN_OPT := "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
empty :=
space := $(empty) $(empty)
TSAN_TESTS := test_monitor test_device_rapl test_device test_util test_zeusd test_http test_proxy
TSAN_SKIP := *Fork*:*Child*:*Signal*:ZeusdCli.*:PrometheusEndToEnd.*:PythonWire.*:DaemonPrivileges.*
test-tsan: setup
	@cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZEUS_TSAN=ON \
	  -DZEUS_BUILD_BENCHMARKS=OFF "-DZEUS_TSAN_SUITES=$(subst $(space),;,$(TSAN_TESTS))" \
	  $(LINE_TABLES) $(TSAN_OPT) $(LAUNCHER) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TESTS) fake_nvml
	@set -e; for t in $(TSAN_TESTS); do \
	  echo "tsan: $$t"; \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ZEUS_LOG_LEVEL=error \
	    $(TSAN_BUILD)/bin/$$t --gtest_brief=1 --gtest_filter='-$(TSAN_SKIP)'; \
	done

# Coverage-guided fuzzing (clang + libFuzzer + ASan/UBSan): every target in
# tests/fuzz for FUZZ_SECONDS in all, built optimized in its own folder (only
# the fuzz targets and the parts they link). See tests/fuzz/README.md.
fuzz: setup
	@cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZEUS_LIBFUZZER=ON \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DZEUS_BUILD_BENCHMARKS=OFF \
	  $(LINE_TABLES) $(LAUNCHER) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all
	@bash scripts/run_fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The same targets from the sanitizer build of test-asan (CI's short run): no
# second compile of the library, at -O0's lower rate of inputs per second.
fuzz-asan: setup
	@$(ASAN_CONFIGURE)
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target fuzz_all
	@bash scripts/run_fuzz.sh $(ASAN_BUILD) $(FUZZ_SECONDS)

bench: build
	@bash scripts/run_benchmarks.sh $(BUILD)

# The batch-size optimizer service under the bso-w1 load (about 7 minutes).
bench-bso: build
	@bash scripts/run_bso_load.sh $(BUILD)

# The measurement-only configuration (ZEUS_MINIMAL: no Boost, SQLite,
# libpq/libpqxx, libcurl, OpenSSL or MPI), built and its programs run, also
# against the zeusd of $(BUILD) (CI's `make test` has built it).
build-minimal:
	@bash scripts/setup.sh --only minimal
	@cmake -S . -B $(MIN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZEUS_MINIMAL=ON \
	  $(LINE_TABLES) $(LAUNCHER) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(MIN_BUILD) -j $(JOBS)
	@bash scripts/check_minimal.sh $(MIN_BUILD) $(BUILD)/bin/zeusd

# Debian packages (zeus, libzeus-dev, zeusd, python3-zeuscpp) into
# $(PKG_BUILD)/packages, with lintian's findings (docs/install.md).
package:
	@bash scripts/setup.sh package
	@cmake -S . -B $(PKG_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc \
	  -DZEUS_BUILD_TESTS=OFF -DZEUS_BUILD_BENCHMARKS=OFF $(LINE_TABLES) $(LAUNCHER) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(PKG_BUILD) -j $(JOBS)
	@bash scripts/make_packages.sh $(PKG_BUILD)

# The packages installed into a fresh Debian 12 root (debootstrap, cached)
# and smoke-tested there; see scripts/package_test.sh.
package-test: package
	@bash scripts/package_test.sh $(PKG_BUILD)/packages

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

# Fails (and names the files) when any tracked source is not clang-formatted.
format-check: setup
	@git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) $(PKG_BUILD) $(MIN_BUILD)
