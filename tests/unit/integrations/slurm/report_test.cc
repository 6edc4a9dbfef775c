// `zeus slurm report`'s library: record lines read back, summed per job,
// missing energy kept apart, rates applied.
#include "integrations/slurm/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "zeus/util/error.h"

namespace zeus::slurm {
namespace {

namespace fs = std::filesystem;

std::string line(const std::string& job, const std::string& step, double start, double end,
                 const std::string& energy, const std::string& extra = "") {
  return R"({"job":")" + job + R"(","step":")" + step +
         R"(","node":"n1","uid":1000,"user":"alice","start":)" + std::to_string(start) +
         R"(,"end":)" + std::to_string(end) + "," + energy + extra + "}";
}

TEST(SlurmReport, ParsesARecordAndRejectsBadFields) {
  const auto r = parse_step_record(
      line(
          "7", "0", 100, 160, R"("gpu_j":10,"cpu_j":5.5,"idle_j":null)",
          R"(,"method":"cpu_time","gpus":["GPU-a"],"missing":["idle"],"array_job":6,"array_task":1)"),
      "7.0.json");
  EXPECT_EQ(r.job, "7");
  EXPECT_EQ(r.user, "alice");
  EXPECT_EQ(r.gpu_j, 10);
  EXPECT_EQ(r.cpu_j, 5.5);
  EXPECT_FALSE(r.idle_j);
  EXPECT_EQ(r.gpus, std::vector<std::string>{"GPU-a"});
  EXPECT_EQ(r.array_job, 6u);
  EXPECT_EQ(r.array_task, 1u);
  EXPECT_THROW(parse_step_record(line("7", "0", 100, 50, R"("gpu_j":1)"), "x"), Error);
  EXPECT_THROW(parse_step_record(line("7", "0", 1, 2, R"("gpu_j":-1)"), "x"), Error);
  EXPECT_THROW(parse_step_record(line("7", "0", 1, 2, R"("gpus":[1])"), "x"), Error);
  EXPECT_THROW(parse_step_record("{", "x"), Error);
}

TEST(SlurmReport, SumsStepsPerJobAndKeepsMissingApart) {
  std::vector<StepRecord> records = {
      parse_step_record(line("8", "batch", 100, 200, R"("gpu_j":0,"cpu_j":1,"idle_j":0)"), "a"),
      parse_step_record(line("8", "0", 110, 150,
                             R"("gpu_j":100,"cpu_j":10,"idle_j":20,"method":"m1","gpus":["G0"])"),
                        "b"),
      parse_step_record(
          line("8", "1", 140, 190,
               R"("gpu_j":50,"cpu_j":5,"idle_j":10,"method":"m2","gpus":["G0","G1"])"),
          "c"),
      parse_step_record(line("9", "0", 300, 360, R"("gpu_j":null,"cpu_j":null,"idle_j":null)",
                             R"(,"missing":["all energy: zeusd unreachable"])"),
                        "d"),
  };
  const auto jobs = summarize_jobs(records, {});
  ASSERT_EQ(jobs.size(), 2u);
  const auto& j8 = jobs[0];
  EXPECT_EQ(j8.job, "8");
  EXPECT_DOUBLE_EQ(j8.duration_s(), 100);
  EXPECT_EQ(j8.gpu_j, 150);
  EXPECT_EQ(j8.cpu_j, 16);
  EXPECT_EQ(j8.idle_j, 30);
  EXPECT_EQ(j8.method, "m1+m2");
  EXPECT_TRUE(j8.complete);
  // G0 held 110..190 (overlapping steps counted once), G1 140..190.
  EXPECT_NEAR(j8.gpu_hours, (80.0 + 50.0) / 3600.0, 1e-9);
  const auto& j9 = jobs[1];
  EXPECT_FALSE(j9.gpu_j);
  EXPECT_FALSE(j9.complete);
  EXPECT_EQ(j9.missing, std::vector<std::string>{"step 0: all energy: zeusd unreachable"});

  const auto table = render_report_table(jobs, {});
  EXPECT_NE(table.find("150.0"), std::string::npos) << table;
  EXPECT_NE(table.find("* job 9: step 0: all energy: zeusd unreachable"), std::string::npos)
      << table;
  const auto j = report_json(jobs, Rates{400.0, 0.25});
  EXPECT_TRUE(j["jobs"][1]["gpu_j"].is_null());
  EXPECT_EQ(j["jobs"][1]["complete"], false);
  EXPECT_DOUBLE_EQ(j["jobs"][0]["carbon_g"].get<double>(), 196.0 / 3.6e6 * 400.0);
  EXPECT_DOUBLE_EQ(j["jobs"][0]["cost"].get<double>(), 196.0 / 3.6e6 * 0.25);
  EXPECT_EQ(j["total"]["gpu_j"], 150);
  EXPECT_EQ(j["total"]["complete"], false);
}

ReportFilter filter_job(const std::string& v) {
  ReportFilter f;
  f.job = v;
  return f;
}
ReportFilter filter_user(const std::string& v) {
  ReportFilter f;
  f.user = v;
  return f;
}
ReportFilter filter_since(double v) {
  ReportFilter f;
  f.since = v;
  return f;
}

TEST(SlurmReport, Filters) {
  std::vector<StepRecord> records = {
      parse_step_record(line("10", "0", 100, 200, R"("gpu_j":1,"cpu_j":1,"idle_j":1)"), "a"),
      parse_step_record(line("12", "0", 300, 400, R"("gpu_j":1,"cpu_j":1,"idle_j":1)",
                             R"(,"array_job":11,"array_task":1)"),
                        "b"),
  };
  records[1].user = "bob";
  records[1].uid = 1001;
  EXPECT_EQ(summarize_jobs(records, filter_job("10")).size(), 1u);
  EXPECT_EQ(summarize_jobs(records, filter_job("11")).at(0).job, "12");
  EXPECT_EQ(summarize_jobs(records, filter_user("bob")).at(0).job, "12");
  EXPECT_EQ(summarize_jobs(records, filter_user("1000")).at(0).job, "10");
  EXPECT_EQ(summarize_jobs(records, filter_since(250.0)).at(0).job, "12");
  EXPECT_TRUE(summarize_jobs(records, filter_user("carol")).empty());
}

TEST(SlurmReport, ReadsADirectorySkippingBadFiles) {
  char templ[] = "/tmp/zeus_slurm_report.XXXXXX";
  const fs::path dir = ::mkdtemp(templ);
  std::ofstream(dir / "5.0.json") << line("5", "0", 1, 2, R"("gpu_j":1,"cpu_j":1,"idle_j":1)")
                                  << "\n";
  std::ofstream(dir / "5.batch.json") << line("5", "batch", 1, 3, R"("cpu_j":1)") << "\n";
  std::ofstream(dir / "6.0.json") << "{oops\n";
  std::ofstream(dir / ".5.1.json.abc123") << "partial";
  std::vector<std::string> skipped;
  const auto records = read_step_records(dir.string(), &skipped);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].step, "0");
  EXPECT_EQ(records[1].step, "batch");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_TRUE(skipped[0].starts_with("6.0.json: ")) << skipped[0];
  EXPECT_THROW(read_step_records((dir / "none").string()), Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zeus::slurm
