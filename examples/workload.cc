// A small bundled workload for `make run`: dense matrix multiplication on the
// CPU for a given number of seconds, so there is real work to measure.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

#include "zeus/util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Multiply matrices on the CPU for a while (a workload to measure)"};
  double seconds = 2.0;
  int n = 192;
  app.add_option("--seconds", seconds, "How long to run")->check(CLI::Range(0.001, 86400.0));
  app.add_option("--size", n, "Matrix size")->check(CLI::Range(8, 2048));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the error
    return code == 0 ? 0 : zeus::kExitUsage;
  }

  const auto un = static_cast<std::size_t>(n);
  std::vector<double> a(un * un, 1.0001), b(un * un, 0.9999), c(un * un, 0.0);
  const auto start = std::chrono::steady_clock::now();
  long multiplications = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    for (std::size_t i = 0; i < un; ++i) {
      for (std::size_t k = 0; k < un; ++k) {
        const double aik = a[i * un + k];
        for (std::size_t j = 0; j < un; ++j) c[i * un + j] += aik * b[k * un + j];
      }
    }
    ++multiplications;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(
      "workload: {} multiplications of {}x{} matrices in {:.2f} s ({:.2f} GFLOP/s), checksum "
      "{:.3e}\n",
      multiplications, n, n, elapsed, 2.0 * n * n * n * multiplications / elapsed / 1e9, c[0]);
  return std::fflush(stdout) == 0 ? 0 : zeus::kExitFailure;
}
