// The commands a reduced build (pip's default, ZEUS_MINIMAL) leaves out say
// what is missing and how to get it (apps/zeus/absent_commands.h): the table
// names commands that exist (this suite runs the full build), and the message
// names only the switches that are off. scripts/check_minimal.sh runs the
// minimal build's `zeus simulate` for the exit status and the text as printed.
#include "apps/zeus/absent_commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cli_test_helpers.h"

namespace zeus::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

TEST(AbsentCommands, EveryOptionalCommandExistsInTheFullBuild) {
  for (const auto& c : cli::optional_commands()) {
    std::vector<std::string> argv = {bin("zeus")};
    std::istringstream words(c.path);
    for (std::string w; words >> w;) argv.push_back(w);
    argv.push_back("--help");
    const auto r = run_program(argv);
    EXPECT_EQ(r.exit_code, 0) << c.path << ": " << r.err;
    EXPECT_FALSE(c.needs.empty()) << c.path;
  }
}

TEST(AbsentCommands, TheMessageNamesTheSwitchesOffAndHowToGetThem) {
  const auto simulate =
      cli::absent_command_message("simulate", {"ZEUS_WITH_HTTP", "ZEUS_WITH_SIM"});
  ASSERT_TRUE(simulate);
  EXPECT_THAT(*simulate, HasSubstr("`zeus simulate` is not in this build (built without "
                                   "ZEUS_WITH_SIM: the trace simulator); to get it: reinstall "
                                   "with ZEUSCPP_FULL=1"));
  EXPECT_THAT(*simulate, HasSubstr("configure CMake with -DZEUS_WITH_SIM=ON"));
  EXPECT_THAT(*simulate, Not(HasSubstr("HTTP")));
  // Only the switches that are off, each once.
  EXPECT_THAT(cli::absent_command_message("bso", {"ZEUS_WITH_HTTP"}),
              Optional(HasSubstr("built without ZEUS_WITH_HTTP: the batch-size optimizer service); "
                                 "to get it")));
  EXPECT_THAT(cli::absent_command_message("perseus serve", {"ZEUS_WITH_HTTP", "ZEUS_WITH_PERSEUS"}),
              Optional(HasSubstr("-DZEUS_WITH_PERSEUS=ON -DZEUS_WITH_HTTP=ON")));
  // Built, or no build has it: nothing to say (the CLI says "unknown command").
  EXPECT_EQ(cli::absent_command_message("simulate", {"ZEUS_WITH_HTTP"}), std::nullopt);
  EXPECT_EQ(cli::absent_command_message("bogus", {"ZEUS_WITH_SIM"}), std::nullopt);
}

}  // namespace
}  // namespace zeus::testing
