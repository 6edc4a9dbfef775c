#include "util/gnuplot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "zeus/util/error.h"

namespace zeus {
namespace {

TEST(Gnuplot, DrawsAScriptAndReportsFailures) {
  ASSERT_TRUE(gnuplot_has_terminal("svg")) << "gnuplot is installed by scripts/setup.sh";
  EXPECT_FALSE(gnuplot_has_terminal("no-such-terminal"));
  const auto dir =
      std::filesystem::temp_directory_path() / ("zeus_gnuplot_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto script = (dir / "p.gp").string();
  const auto svg = (dir / "p.svg").string();
  std::ofstream(script) << "set terminal svg\nset output '" << svg << "'\nplot x*x\n";
  run_gnuplot(script);
  EXPECT_GT(std::filesystem::file_size(svg), 100u);
  std::ofstream(script) << "this is not gnuplot\n";
  try {
    run_gnuplot(script);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
  }
  std::filesystem::remove_all(dir);
}

TEST(Gnuplot, MissingGnuplotNamesThePackage) {
  const std::string saved = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  setenv("PATH", "/nonexistent", 1);
  try {
    run_gnuplot("/tmp/whatever.gp");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("gnuplot-nox"), std::string::npos);
  }
  setenv("PATH", saved.c_str(), 1);
}

}  // namespace
}  // namespace zeus
