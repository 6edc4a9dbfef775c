// The driver linked into every fuzz target in the normal (gcc) build, where
// libFuzzer is not available. It replays the target's corpus, then runs a
// fixed number of deterministic mutations of it, so the ordinary test suite
// exercises every target in a few seconds. Coverage-guided runs use libFuzzer
// instead (`make fuzz`, see tests/fuzz/README.md).
//
//   fuzz_<name> [--iterations N] [--seed S] CORPUS_DIR_OR_FILE...
//
// Seeds named bad_* must be rejected (a zeus::Error), every other seed must
// be accepted, and at least one mutant must be accepted: a parser that
// rejects everything, or accepts what it must refuse, fails here. N defaults
// to ZEUS_FUZZ_ITERATIONS, else 2000. Each input gets 20 s (a hang guard).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

struct Seed {
  std::string name;
  std::string bytes;
  bool must_reject;
};

// Tokens that break parsers: non-finite and huge numbers, signs, truncation
// points, quoting, a byte-order mark, NUL.
// The first kNumericTokens replace numbers.
constexpr std::size_t kNumericTokens = 14;
constexpr std::string_view kTokens[] = {"nan",
                                        "inf",
                                        "-inf",
                                        "1e308",
                                        "-1e308",
                                        "1e-320",
                                        "-1",
                                        "0",
                                        "-0",
                                        "9223372036854775808",
                                        "4294967297",
                                        "99999999999999999999",
                                        "0x10",
                                        "1_000",
                                        ",",
                                        "\"",
                                        "\n",
                                        "\r\n",
                                        "{",
                                        "}",
                                        "[",
                                        "]",
                                        ":",
                                        "-",
                                        ".",
                                        "e",
                                        "null",
                                        "true",
                                        "\xef\xbb\xbf",
                                        std::string_view("\0", 1),
                                        "\\u0000",
                                        "0-99999999999",
                                        " "};

bool long_option(const char* arg, const char* name, long& out, int& i, int argc, char** argv) {
  if (std::string(arg) != name || i + 1 >= argc) return false;
  out = std::strtol(argv[++i], nullptr, 10);
  return true;
}

std::string mutate(const std::string& seed, std::mt19937_64& rng) {
  auto below = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  std::string s = seed;
  const std::size_t edits = 1 + below(6);
  for (std::size_t e = 0; e < edits; ++e) {
    switch (below(6)) {
      case 0:  // flip a byte
        if (!s.empty()) s[below(s.size())] = static_cast<char>(rng() & 0xff);
        break;
      case 1: {  // insert a token
        s.insert(below(s.size() + 1), kTokens[below(std::size(kTokens))]);
        break;
      }
      case 2:  // delete a few bytes
        if (!s.empty()) s.erase(below(s.size()), 1 + below(4));
        break;
      case 3:  // duplicate a slice
        if (!s.empty()) {
          const std::size_t at = below(s.size());
          s.insert(below(s.size() + 1), s.substr(at, 1 + below(32)));
        }
        break;
      case 4: {  // replace a run of digits by a token (a number made huge, negative, nan...)
        const std::size_t at = below(s.size() + 1);
        std::size_t end = at;
        while (end < s.size() &&
               (std::isdigit(static_cast<unsigned char>(s[end])) != 0 || s[end] == '.')) {
          ++end;
        }
        s.replace(at, end - at, kTokens[below(kNumericTokens)]);
        break;
      }
      default:  // truncate
        s.resize(below(s.size() + 1));
        break;
    }
  }
  return s;
}

bool run_one(const std::string& input) {
  const long before = zeus::fuzz::g_accepted.load();
  alarm(20);
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
  alarm(0);
  return zeus::fuzz::g_accepted.load() > before;
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 2000;
  if (const char* env = std::getenv("ZEUS_FUZZ_ITERATIONS")) {
    iterations = std::max(1L, std::strtol(env, nullptr, 10));
  }
  long seed_value = 1;
  std::vector<std::filesystem::path> paths;
  for (int i = 1; i < argc; ++i) {
    if (long_option(argv[i], "--iterations", iterations, i, argc, argv)) continue;
    if (long_option(argv[i], "--seed", seed_value, i, argc, argv)) continue;
    paths.emplace_back(argv[i]);
  }
  std::vector<Seed> seeds;
  for (const auto& p : paths) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(p)) {
      for (const auto& entry : std::filesystem::directory_iterator(p)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else {
      files.push_back(p);
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const std::string name = f.filename().string();
      seeds.push_back({name, bytes, name.starts_with("bad_")});
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "fuzz: no seed inputs given (pass the corpus directory)\n");
    return 2;
  }
  int failures = 0;
  for (const Seed& s : seeds) {
    const bool ok = run_one(s.bytes);
    if (ok == s.must_reject) {
      std::fprintf(stderr, "fuzz: seed %s was %s\n", s.name.c_str(),
                   ok ? "accepted but must be rejected (bad_*)" : "rejected but must be accepted");
      ++failures;
    }
  }
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed_value));
  long mutants_accepted = 0;
  for (long i = 0; i < iterations; ++i) {
    if (run_one(mutate(seeds[rng() % seeds.size()].bytes, rng))) ++mutants_accepted;
  }
  std::printf("fuzz: %zu seeds, %ld mutants, %ld accepted\n", seeds.size(), iterations,
              mutants_accepted);
  if (iterations >= 100 && mutants_accepted == 0) {
    std::fprintf(stderr, "fuzz: no mutant was accepted: the parser rejects everything\n");
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}
