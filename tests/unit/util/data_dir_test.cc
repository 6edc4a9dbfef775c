// zeus::data_dir: the data an installed program ships with is found next to
// the program (<bin>/../share/zeus), or where ZEUS_DATA_DIR says.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "util/data_dir.h"

namespace {

namespace fs = std::filesystem;

class DataDir : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("ZEUS_DATA_DIR"); }
  void TearDown() override { unsetenv("ZEUS_DATA_DIR"); }
};

TEST_F(DataDir, NextToTheProgramUnderShareZeus) {
  // This test binary is build/bin/test_util: the build tree mirrors the
  // install layout, so build/share/zeus/zeus-traces is the shipped data.
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  const fs::path expected =
      fs::weakly_canonical(exe.parent_path() / ".." / "share" / "zeus" / "zeus-traces");
  EXPECT_EQ(zeus::data_dir("zeus-traces"), expected.string());
  EXPECT_TRUE(fs::is_directory(zeus::data_dir("zeus-traces")));
  EXPECT_TRUE(fs::exists(fs::path(zeus::data_dir("zeus-traces")) / "summary_power_a40.csv"));
}

TEST_F(DataDir, EnvironmentOverrides) {
  setenv("ZEUS_DATA_DIR", "/opt/zeus-data", 1);
  EXPECT_EQ(zeus::data_dir("zeus-traces"), "/opt/zeus-data/zeus-traces");
  // An empty value is as if unset.
  setenv("ZEUS_DATA_DIR", "", 1);
  const std::string unset = zeus::data_dir("zeus-traces");
  unsetenv("ZEUS_DATA_DIR");
  EXPECT_EQ(unset, zeus::data_dir("zeus-traces"));
}

TEST_F(DataDir, MissingDataSetStillNamesWhereItWasLookedFor) {
  const std::string dir = zeus::data_dir("no-such-data-set");
  EXPECT_TRUE(dir.ends_with("/share/zeus/no-such-data-set")) << dir;
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
