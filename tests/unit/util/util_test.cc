#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "util/csv.h"
#include "util/parse.h"
#include "zeus/optimizer/power_limit/selection/zeus_cost.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"
#include "zeus/util/periodic_thread.h"
#include "zeus/util/units.h"

namespace zeus {
namespace {

using namespace zeus::literals;

TEST(Units, ArithmeticKeepsUnits) {
  const Joules e = 300_W * Seconds(2.0);
  EXPECT_DOUBLE_EQ(e.value(), 600.0);
  EXPECT_DOUBLE_EQ((e / Seconds(4.0)).value(), 150.0);
  EXPECT_DOUBLE_EQ((e / 200_W).count(), 3.0);
  EXPECT_EQ(to_milliwatts(Watts(212.3456)), Milliwatts(212346));
  EXPECT_DOUBLE_EQ(to_watts(250000_mW).value(), 250.0);
  EXPECT_LT(100_mW, 200_mW);
}

TEST(Clock, ManualClockMovesOnlyWhenTold) {
  ManualClock clock(Seconds(10));
  EXPECT_DOUBLE_EQ(clock.now().count(), 10.0);
  clock.advance(Seconds(0.5));
  EXPECT_DOUBLE_EQ(clock.now().count(), 10.5);
  clock.sleep_until(Seconds(12));
  EXPECT_DOUBLE_EQ(clock.now().count(), 12.0);
  clock.sleep_until(Seconds(11));  // never goes back
  EXPECT_DOUBLE_EQ(clock.now().count(), 12.0);
}

TEST(PeriodicThread, TicksOncePerPeriodOfItsClockAndStopsAtOnce) {
  ManualClock clock(Seconds(10));
  std::atomic<int> ticks{0};
  PeriodicThread thread;
  thread.start(clock, Seconds(2), [&] { ++ticks; });
  ASSERT_TRUE(clock.await_blocked(1));
  clock.advance(Seconds(1));
  ASSERT_TRUE(clock.await_blocked(1));
  EXPECT_EQ(ticks.load(), 0);
  clock.advance(Seconds(1));
  ASSERT_TRUE(clock.await_blocked(1));
  EXPECT_EQ(ticks.load(), 1);
  clock.advance(Seconds(7));  // 2.5 periods late: two ticks, no burst of three
  ASSERT_TRUE(clock.await_blocked(1));
  EXPECT_EQ(ticks.load(), 3);
  thread.stop();  // wakes the wait for a deadline still ahead
  thread.stop();
  EXPECT_EQ(ticks.load(), 3);
}

TEST(Csv, ParsesQuotedFieldsAndReportsLines) {
  const auto t = CsvTable::parse("a,b\n1,\"x,y\"\n\n2,\"say \"\"hi\"\"\"\n", "mem.csv");
  ASSERT_EQ(t.num_rows(), 2u);
  EXPECT_EQ(t.cell(0, 1), "x,y");
  EXPECT_EQ(t.cell(1, 1), "say \"hi\"");
  EXPECT_EQ(t.line_of(1), 4u);
  EXPECT_EQ(t.as_int(1, t.column("a")), 2);
  try {
    (void)t.as_double(0, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParse);
    EXPECT_NE(std::string(e.what()).find("mem.csv:2"), std::string::npos);
  }
  EXPECT_THROW((void)t.column("nope"), Error);
  EXPECT_THROW(CsvTable::parse("a,b\n1\n", "x"), Error);
  EXPECT_THROW(CsvTable::parse("", "x"), Error);
}

TEST(Parse, ListsAndRanges) {
  EXPECT_EQ(parse_int_list("0,2-4", "--gpus"), (std::vector<int>{0, 2, 3, 4}));
  EXPECT_EQ(parse_double_list("0.5, 1", "--eta"), (std::vector<double>{0.5, 1.0}));
  EXPECT_THROW(parse_int_list("0,,1", "--gpus"), Error);
  EXPECT_THROW(parse_int_list("4-2", "--gpus"), Error);
  EXPECT_THROW(parse_double("abc", "--beta"), Error);
}

TEST(Files, AtomicWriteReplacesWholeFile) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("zeus_files_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto path = (dir / "sub" / "f.json").string();
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  EXPECT_EQ(read_file(path), "second");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir / "sub")) ++entries;
  EXPECT_EQ(entries, 1);  // no temporary left behind
  EXPECT_THROW(read_file((dir / "missing").string()), Error);
  std::filesystem::remove_all(dir);
}

TEST(Files, ReadRefusesDirectoriesSpecialFilesAndOversizedFiles) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("zeus_read_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  try {
    read_file(dir.string());
    ADD_FAILURE() << "a directory was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  // /dev/zero would never end; a FIFO without a writer would block forever.
  EXPECT_THROW(read_file("/dev/zero"), Error);
  const auto fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    read_file(fifo);
    ADD_FAILURE() << "a FIFO was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  const auto big = (dir / "big").string();
  write_file_atomically(big, std::string(1000, 'x'));
  EXPECT_EQ(read_file(big, 1000).size(), 1000u);
  EXPECT_THROW(read_file(big, 999), Error);
  std::filesystem::remove_all(dir);
}

TEST(Metric, ZeusCost) {
  EXPECT_DOUBLE_EQ(power_limit::zeus_cost(Joules(100), Seconds(2), 0.5, Watts(300)),
                   0.5 * 100 + 0.5 * 600);
  EXPECT_DOUBLE_EQ(power_limit::zeus_cost(Joules(100), Seconds(2), 1.0, Watts(300)), 100);
}

}  // namespace
}  // namespace zeus
