// The project's file and input guarantees: the safe writer, bounded parsing
// of flags, escaping of untrusted text, CSV quirks of real files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "support/temp_dir.h"
#include "util/csv.h"
#include "util/parse.h"
#include "util/text.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus {
namespace {

namespace fs = std::filesystem;

using ::zeus::testing::TempDir;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SafeWriter, WritesThroughASymlinkAndKeepsTheLink) {
  TempDir dir;
  const auto real = dir / "real.json";
  const auto link = dir / "link.json";
  write_file_atomically(real.string(), "old");
  fs::create_symlink("real.json", link);
  write_file_atomically(link.string(), "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_file(real.string()), "new");
  // A dangling link creates its target.
  const auto dangling = dir / "dangling.json";
  fs::create_symlink(dir / "sub" / "target.json", dangling);
  write_file_atomically(dangling.string(), "made");
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(read_file((dir / "sub" / "target.json").string()), "made");
}

TEST(SafeWriter, KeepsTheModeOfAnExistingFile) {
  TempDir dir;
  const auto path = (dir / "f.txt").string();
  write_file_atomically(path, "a");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  write_file_atomically(path, "b");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(read_file(path), "b");
}

TEST(SafeWriter, NewFilesFollowTheUmask) {
  TempDir dir;
  const mode_t old = ::umask(027);
  const auto path = (dir / "new.txt").string();
  write_file_atomically(path, "x");
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(SafeWriter, CharacterDevicesAreWrittenInPlaceAndAFullDiskIsAnError) {
  EXPECT_NO_THROW(write_file_atomically("/dev/null", "discarded"));
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));  // still a device, not replaced by a file
  const auto msg = message_of([] { write_file_atomically("/dev/full", "data"); });
  EXPECT_NE(msg.find("/dev/full"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No space"), std::string::npos) << msg;
}

TEST(SafeWriter, RefusesDirectoriesAndAPipeWithoutReader) {
  TempDir dir;
  fs::create_directories(dir / "d");
  EXPECT_NE(
      message_of([&] { write_file_atomically((dir / "d").string(), "x"); }).find("is a directory"),
      std::string::npos);
  const auto fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(message_of([&] { write_file_atomically(fifo, "x"); }).find("nobody reads"),
            std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(ParseFlags, RangesAreBoundedBeforeExpansionAndNeverNarrowed) {
  EXPECT_EQ(parse_int_list("0-3,7", "--gpus", 0, 1023), (std::vector<int>{0, 1, 2, 3, 7}));
  // Would allocate ~10^11 ints if expanded first.
  const auto huge = message_of([] { parse_int_list("0-99999999999", "--gpus", 0, 1023); });
  EXPECT_NE(huge.find("out of range"), std::string::npos) << huge;
  const auto many = message_of([] { parse_int_list("0-100000", "--seeds", 0, 1 << 30, 1000); });
  EXPECT_NE(many.find("more than 1000"), std::string::npos) << many;
  // 4294967297 must not become 1.
  EXPECT_THROW(parse_int_list("4294967297", "--gpus", 0, 1023), Error);
  EXPECT_THROW(parse_int("99999999999999999999999", "--x"), Error);
  EXPECT_EQ(parse_int("-5", "--x", -10, 10), -5);
  EXPECT_THROW(parse_int("11", "--x", -10, 10), Error);
}

TEST(ParseFlags, DuplicatesAreRejectedNotDoubleCounted) {
  EXPECT_NE(message_of([] { parse_int_list("1,1", "--seeds"); }).find("twice"), std::string::npos);
  EXPECT_THROW(parse_int_list("0-2,2", "--gpus"), Error);
  EXPECT_THROW(parse_double_list("0.5,0.5", "--eta"), Error);
  EXPECT_THROW(split_list("v100,v100", "--gpu"), Error);
  EXPECT_EQ(split_list("v100, a40", "--gpu"), (std::vector<std::string>{"v100", "a40"}));
}

TEST(ParseFlags, NumbersMustBeFiniteAndInRangeWithShortMessages) {
  EXPECT_THROW(parse_double("nan", "--interval"), Error);
  EXPECT_THROW(parse_double("inf", "--interval"), Error);
  EXPECT_THROW(parse_double("1e999", "--interval"), Error);
  EXPECT_THROW(parse_double("0", "--interval", 0.001), Error);
  const auto msg = message_of([] { parse_double("1e308", "--beta", 0, 100); });
  EXPECT_LT(msg.size(), 100u) << msg;
  const auto esc = message_of([] { parse_double("\x1b[31mred", "--beta"); });
  EXPECT_EQ(esc.find('\x1b'), std::string::npos) << esc;
}

TEST(Printable, EscapesControlsAndBadUtf8AndKeepsGoodUtf8) {
  EXPECT_EQ(printable("plain"), "plain");
  EXPECT_EQ(printable("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(printable("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xc2\x9b"), "\\xc2\\x9b");  // C1 control (CSI) as UTF-8
  EXPECT_EQ(printable(std::string(200, 'x'), 10), "xxxxxxxxxx...");
}

TEST(PercentEncode, KeepsUnreservedAndAskedCharacters) {
  EXPECT_EQ(percent_encode("w1-007_a.b~c"), "w1-007_a.b~c");
  EXPECT_EQ(percent_encode("a b/+\xff"), "a%20b%2F%2B%FF");
  EXPECT_EQ(percent_encode("a+b c", "+"), "a+b%20c");
}

TEST(CsvInput, AcceptsAByteOrderMarkAndRejectsNonFiniteWhereAsked) {
  const auto t = CsvTable::parse("\xEF\xBB\xBFname,value\na,1.5\nb,inf\n", "bom.csv");
  EXPECT_EQ(t.column("name"), 0u);
  EXPECT_DOUBLE_EQ(t.as_finite_double(0, 1), 1.5);
  EXPECT_THROW(t.as_finite_double(1, 1), Error);
  EXPECT_THROW(t.as_finite_double(0, 1, 0.0, 1.0), Error);
  TempDir dir;
  EXPECT_THROW(CsvTable::read_file((dir / "").string()), Error);
}

}  // namespace
}  // namespace zeus
