// Mutation property tests for the planner's two files (a stage profile and
// plans.json): mutated inputs must either parse or throw zeus::Error, never
// crash, hang or throw anything else. The coverage-guided fuzz targets of the
// same parsers are tests/fuzz/fuzz_pipeline_frequency_{profile,plans}.cc;
// these run in the planner's unit suite. ZEUS_FUZZ_ITERATIONS raises the count.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "zeus/optimizer/batch_size/rng.h"
#include "zeus/optimizer/pipeline_frequency/planner/planner.h"
#include "zeus/optimizer/pipeline_frequency/planner/profile.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus {
namespace {

int iterations() {
  const char* env = std::getenv("ZEUS_FUZZ_ITERATIONS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 2000;
}

// The project's seedable generator: the same stream on every platform.
using Rng = batch_size::Rng;

std::size_t below(Rng& rng, std::size_t n) {
  return n == 0 ? 0 : static_cast<std::size_t>(rng.uniform_int(n));
}

// Mutates a valid input: byte flips, insertions of interesting characters,
// deletions, duplicated slices, truncation.
std::string mutate(const std::string& seed, Rng& rng) {
  static const std::string kInteresting = ",\"\n\r{}[]:-.eE0123456789 \t\\nan inf";
  std::string s = seed;
  const std::size_t edits = 1 + below(rng, 8);
  for (std::size_t e = 0; e < edits; ++e) {
    switch (below(rng, 5)) {
      case 0:
        if (!s.empty()) s[below(rng, s.size())] = static_cast<char>(rng.next_u64() & 0xff);
        break;
      case 1:
        s.insert(below(rng, s.size() + 1), 1, kInteresting[below(rng, kInteresting.size())]);
        break;
      case 2:
        if (!s.empty()) s.erase(below(rng, s.size()), 1 + below(rng, 4));
        break;
      case 3:
        if (!s.empty()) {
          const std::size_t at = below(rng, s.size());
          s.insert(below(rng, s.size() + 1), s.substr(at, 1 + below(rng, 16)));
        }
        break;
      default:
        s.resize(below(rng, s.size() + 1));
        break;
    }
  }
  return s;
}

void fuzz(const std::string& seed, std::uint64_t rng_seed,
          const std::function<void(const std::string&)>& parse) {
  Rng rng(rng_seed);
  // The seed is valid: a parser that rejects it (or everything) fails here.
  ASSERT_NO_THROW(parse(seed));
  int accepted = 0;
  for (int i = 0; i < iterations(); ++i) {
    const std::string input = mutate(seed, rng);
    try {
      parse(input);
      ++accepted;
    } catch (const Error&) {
      // A clear error is the expected outcome for bad input.
    }
  }
  ::testing::Test::RecordProperty("accepted", accepted);
  EXPECT_GT(accepted, 0) << "no mutant was accepted";
}

TEST(PlannerParserMutation, PerseusStageProfile) {
  fuzz(
      "stage,instruction,frequency,time,energy\n0,forward,1410,0.010,2.0\n0,forward,1200,0.012,"
      "1.8\n0,backward,1410,0.020,4.0\n0,backward,1200,0.024,3.5\n",
      4, [](const std::string& text) {
        (void)pipeline_frequency::StageProfile::parse(text, "fuzz.csv");
      });
}

// plans.json is a file users keep and may edit: a mutated one must give a
// clear error from reading, selecting or printing a plan, never a crash.
TEST(PlannerParserMutation, PerseusPlansJson) {
  const auto profile = pipeline_frequency::StageProfile::parse(
      "stage,instruction,frequency,time,energy\n"
      "0,forward,1410,0.010,2.0\n0,forward,1200,0.013,1.8\n0,forward,1000,0.016,1.7\n"
      "0,backward,1410,0.020,4.0\n0,backward,1200,0.025,3.5\n0,backward,1000,0.031,3.3\n"
      "1,forward,1410,0.011,2.1\n1,forward,1200,0.014,1.9\n1,forward,1000,0.017,1.8\n"
      "1,backward,1410,0.021,4.1\n1,backward,1200,0.026,3.6\n1,backward,1000,0.032,3.4\n",
      "tiny.csv");
  pipeline_frequency::PlannerOptions options;
  options.microbatches = 2;
  options.unit_time = Seconds(0.001);
  options.p_blocking = Watts(50);
  options.cost_model = pipeline_frequency::CostModelKind::kConvex;
  const auto dir =
      std::filesystem::temp_directory_path() / ("zeus_fuzz_plans_" + std::to_string(::getpid()));
  pipeline_frequency::write_solution(pipeline_frequency::solve_pipeline(profile, options),
                                     dir.string());
  const std::string plans = (dir / "plans.json").string();
  const std::string seed = read_file(plans);
  fuzz(seed, 5, [&](const std::string& text) {
    std::ofstream(plans, std::ios::trunc) << text;  // no fsync: thousands of rewrites
    const auto solution = pipeline_frequency::read_solution(dir.string());
    for (const char* target : {"fastest", "min-energy", "straggler:1.2x"}) {
      const auto i = pipeline_frequency::select_target(solution.points, target);
      (void)pipeline_frequency::plan_json(solution, i, target);
    }
  });
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus
