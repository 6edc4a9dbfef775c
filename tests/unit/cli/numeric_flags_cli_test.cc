// Every floating-point flag of every command refuses NaN and infinities at
// the edge (exit 2, naming the flag), whatever range check the command has:
// CLI11's ranges let NaN through.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_test_helpers.h"

namespace zeus::testing {
namespace {

struct Case {
  std::vector<std::string> argv;  // the command, up to the flag
  std::string flag;
};

TEST(NumericFlags, NonFiniteValuesAreUsageErrorsInEveryCommand) {
  const std::vector<Case> cases = {
      {{"proxy", "serve", "--upstream", "http://127.0.0.1:1"}, "--upstream-timeout"},
      {{"proxy", "serve", "--upstream", "http://127.0.0.1:1"}, "--slice-period"},
      {{"proxy", "serve", "--upstream", "http://127.0.0.1:1"}, "--request-timeout"},
      {{"proxy", "serve", "--upstream", "http://127.0.0.1:1"}, "--client-timeout"},
      {{"simulate", "chase", "--signal", "x.csv"}, "--epochs"},
      {{"simulate", "chase", "--signal", "x.csv"}, "--signal-max"},
      {{"chase", "run", "--signal", "x.csv"}, "--eta"},
      {{"chase", "run", "--signal", "x.csv"}, "--signal-max"},
      {{"selftest"}, "--window"},
      {{"perseus", "serve"}, "--straggler-tolerance"},
  };
  for (const auto& c : cases) {
    for (const char* value : {"nan", "NaN", "inf", "-inf", "1e999"}) {
      std::vector<std::string> argv = {bin("zeus")};
      argv.insert(argv.end(), c.argv.begin(), c.argv.end());
      argv.push_back(c.flag + "=" + value);
      const auto r = run_program(argv, {"ZEUS_GPU_BACKEND=sim"});
      EXPECT_EQ(r.exit_code, 2) << c.flag << "=" << value << ": " << r.err;
      EXPECT_NE(r.err.find(c.flag), std::string::npos) << r.err;
    }
  }
}

TEST(NumericFlags, AnOptionWhoseInfinityMeansSomethingStillRefusesNan) {
  // zeus simulate --beta inf: no early stopping (documented).
  const auto inf = run_program({bin("zeus"), "simulate", "--gpu", "v100", "--workload",
                                "librispeech/deepspeech2", "--beta", "inf", "--format", "csv"});
  EXPECT_EQ(inf.exit_code, 0) << inf.err;
  const auto nan = run_program({bin("zeus"), "simulate", "--beta", "nan"});
  EXPECT_EQ(nan.exit_code, 2) << nan.err;
  EXPECT_NE(nan.err.find("--beta"), std::string::npos) << nan.err;
}

TEST(NumericFlags, ChaseNormaliserMustBePositive) {
  for (const char* command : {"chase run", "simulate chase"}) {
    for (const char* value : {"0", "-1", "-0.5"}) {
      std::vector<std::string> argv = {bin("zeus")};
      argv.push_back(std::string(command).substr(0, std::string(command).find(' ')));
      argv.push_back(std::string(command).substr(std::string(command).find(' ') + 1));
      argv.insert(argv.end(), {"--signal", "x.csv", std::string("--signal-max=") + value});
      const auto r = run_program(argv, {"ZEUS_GPU_BACKEND=sim"});
      EXPECT_EQ(r.exit_code, 2) << command << " " << value << ": " << r.err;
      EXPECT_NE(r.err.find("greater than 0"), std::string::npos) << r.err;
    }
  }
}

}  // namespace
}  // namespace zeus::testing
