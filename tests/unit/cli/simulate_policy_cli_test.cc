// `zeus simulate` with a policy plug-in (examples/plugins/epsilon_greedy.cc)
// chosen by name, and the errors for unknown names and bad plug-ins.
#include <gtest/gtest.h>

#include <string>

#include "cli_test_helpers.h"
#include "util/csv.h"

namespace zeus::testing {
namespace {

const std::string kPlugin = std::string(ZEUS_BINARY_DIR) + "/lib/libzeus_policy_epsilon_greedy.so";

TEST(SimulatePolicyCli, APluginPolicyRunsBesideTheBuiltIns) {
  const auto r = run_program({bin("zeus"), "simulate", "--policy-plugin", kPlugin, "--strategy",
                              "epsilon-greedy,zeus", "--gpu", "v100", "--workload",
                              "imagenet/resnet50", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto t = CsvTable::parse(r.out, "stdout");
  ASSERT_EQ(t.num_rows(), 2u);
  EXPECT_EQ(t.cell(0, t.column("strategy")), "epsilon-greedy");
  EXPECT_EQ(t.cell(0, t.column("early_stopping")), "true");
  EXPECT_EQ(t.cell(1, t.column("strategy")), "zeus");
}

TEST(SimulatePolicyCli, APluginNamedWithoutASlashInTheCurrentFolderIsThatFile) {
  // dlopen alone would look the bare name up on the library search path only.
  const std::string lib_dir = std::string(ZEUS_BINARY_DIR) + "/lib";
  const auto r = run_program({"/bin/sh", "-c",
                              "cd \"$0\" && exec \"$1\" simulate --policy-plugin "
                              "libzeus_policy_epsilon_greedy.so --strategy epsilon-greedy --gpu "
                              "v100 --workload imagenet/resnet50 --format csv",
                              lib_dir, bin("zeus")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("epsilon-greedy"), std::string::npos) << r.out;
  // A bare name that is no file here says how to name one.
  const auto missing = run_program({bin("zeus"), "simulate", "--policy-plugin", "nothere.so"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("give the file's path"), std::string::npos) << missing.err;
}

TEST(SimulatePolicyCli, UnknownPoliciesAndBadPluginsAreUsageErrors) {
  auto r = run_program({bin("zeus"), "simulate", "--strategy", "epsilon-greedy"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown policy 'epsilon-greedy'; known policies: default, grid"),
            std::string::npos)
      << r.err;
  r = run_program({bin("zeus"), "simulate", "--policy-plugin", "/nonexistent/lib.so"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot load the policy plug-in /nonexistent/lib.so"), std::string::npos)
      << r.err;
  r = run_program(
      {bin("zeus"), "simulate", "--policy-plugin", kPlugin, "--policy-plugin", kPlugin});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'epsilon-greedy' is already registered"), std::string::npos) << r.err;
}

TEST(SimulatePolicyCli, BsoServeRefusesABadPluginBeforeServing) {
  const auto r = run_program(
      {bin("zeus"), "bso", "serve", "--policy-plugin", "/nonexistent/lib.so", "--port", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot load the policy plug-in /nonexistent/lib.so"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace zeus::testing
