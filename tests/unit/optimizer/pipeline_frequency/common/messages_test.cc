// The wire format: upstream's JobInfo/RankInfo/FrequencySchedule/
// ProfilingResult bodies, their checks, and the job id.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "util/json.h"
#include "zeus/optimizer/pipeline_frequency/common/messages.h"

namespace zeus::pipeline_frequency {
namespace {

using ::testing::HasSubstr;

// The body upstream's client sends: JobInfo(...).dict().
constexpr const char* kUpstreamJob =
    R"({"job_id": "", "pp_degree": 4, "dp_degree": 2, "tp_degree": 1, "world_size": 8,
        "job_metadata": null})";

TEST(PipelineFrequencyMessagesTest, ParsesUpstreamJobInfo) {
  const auto j = parse_job_info(kUpstreamJob);
  EXPECT_EQ(j.pp_degree, 4);
  EXPECT_EQ(j.dp_degree, 2);
  EXPECT_EQ(j.tp_degree, 1);
  EXPECT_EQ(j.world_size, 8);
  EXPECT_FALSE(j.job_metadata.has_value());
  // pydantic ignores unknown fields; so do we. job_id may be omitted.
  const auto k = parse_job_info(
      R"({"pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1, "x": 5,
          "job_metadata": "gpt3 run"})");
  EXPECT_EQ(k.job_metadata.value(), "gpt3 run");
}

TEST(PipelineFrequencyMessagesTest, RefusesBadJobInfoNamingTheField) {
  const auto field_of = [](const std::string& body) {
    try {
      parse_job_info(body);
    } catch (const FieldError& e) {
      return e.field() + " | " + e.what();
    }
    return std::string("accepted");
  };
  EXPECT_THAT(field_of(R"({"pp_degree": 4, "dp_degree": 2, "tp_degree": 1, "world_size": 6})"),
              HasSubstr("world_size | register_job body: world_size: 6 is not pp_degree x "
                        "dp_degree x tp_degree = 4 x 2 x 1 = 8"));
  EXPECT_THAT(field_of(R"({"job_id": "mine", "pp_degree": 1, "dp_degree": 1, "tp_degree": 1,
                           "world_size": 1})"),
              HasSubstr("job_id | "));
  EXPECT_THAT(field_of(R"({"pp_degree": 0, "dp_degree": 1, "tp_degree": 1, "world_size": 0})"),
              HasSubstr("pp_degree | "));
  EXPECT_THAT(field_of(R"({"pp_degree": "2", "dp_degree": 1, "tp_degree": 1, "world_size": 2})"),
              HasSubstr("pp_degree | "));
  EXPECT_THAT(field_of(R"({"dp_degree": 1, "tp_degree": 1, "world_size": 2})"),
              HasSubstr("pp_degree | "));
  for (const char* bad : {"a/b", "a?b", "a#b", "100%", "line\nbreak"}) {
    nlohmann::json body = {{"pp_degree", 1},
                           {"dp_degree", 1},
                           {"tp_degree", 1},
                           {"world_size", 1},
                           {"job_metadata", bad}};
    EXPECT_THAT(field_of(body.dump()), HasSubstr("job_metadata | ")) << bad;
  }
  EXPECT_THAT(field_of(R"({"pp_degree": 1024, "dp_degree": 1024, "tp_degree": 1024,
                           "world_size": 1073741824})"),
              HasSubstr("world_size | "));
  EXPECT_THAT(field_of("not json"), HasSubstr("register_job body: not valid JSON"));
  // A body nested far deeper than any job info is refused before anything
  // recurses over it (quoting a wrongly typed field would serialize it).
  const std::string deep(300000, '[');
  EXPECT_THAT(field_of(R"({"pp_degree": )" + deep + std::string(300000, ']') + "}"),
              HasSubstr("register_job body: nested deeper than"));
}

TEST(PipelineFrequencyMessagesTest, RankInfoScheduleAndResultRoundTrip) {
  const auto r = parse_rank_info(
      R"({"rank": 5, "dp_rank": 1, "pp_rank": 2, "tp_rank": 0,
          "available_frequencies": [1410, 1395, 210]})");
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(r.pp_rank, 2);
  ASSERT_EQ(r.available_frequencies.size(), 3u);
  EXPECT_EQ(r.available_frequencies[1], Megahertz(1395));
  EXPECT_EQ(parse_rank_info(to_json(r).dump()).available_frequencies, r.available_frequencies);
  EXPECT_THROW(parse_rank_info(R"({"rank": -1, "dp_rank": 0, "pp_rank": 0, "tp_rank": 0,
                                   "available_frequencies": []})"),
               FieldError);

  FrequencySchedule s{3, {{"forward", Megahertz(1410)}, {"backward", Megahertz(1200)}}};
  const auto text = to_json(s).dump();
  EXPECT_EQ(text, R"({"frequencies":[["forward",1410],["backward",1200]],"rank":3})");
  EXPECT_EQ(parse_frequency_schedule(text), s);
  EXPECT_THROW(parse_frequency_schedule(R"({"rank": 0, "frequencies": [["forward"]]})"),
               FieldError);

  const auto res = parse_profiling_result(
      R"({"rank": 2, "iter_time": [1.5, 1.25], "iter_energy": [100, 90.5],
          "time_breakdown": {"forward": [[0.1, 0.2], [0.1]]}})");
  EXPECT_EQ(res.rank, 2);
  ASSERT_EQ(res.iter_time.size(), 2u);
  EXPECT_DOUBLE_EQ(res.iter_time[1].count(), 1.25);
  EXPECT_DOUBLE_EQ(res.iter_energy[1].value(), 90.5);
  ASSERT_EQ(res.time_breakdown.at("forward").size(), 2u);
  EXPECT_TRUE(res.energy_breakdown.empty());
  const auto again = parse_profiling_result(to_json(res).dump());
  EXPECT_EQ(again.iter_time, res.iter_time);
  EXPECT_EQ(again.time_breakdown.at("forward")[0], res.time_breakdown.at("forward")[0]);
  EXPECT_THROW(parse_profiling_result(R"({"rank": 0, "iter_time": [-1], "iter_energy": []})"),
               FieldError);
  EXPECT_THROW(parse_profiling_result(R"({"rank": 0, "iter_time": [1]})"), FieldError);
}

TEST(PipelineFrequencyMessagesTest, JobIdHasUpstreamsFormat) {
  setenv("TZ", "UTC", 1);
  tzset();
  JobInfo j;
  j.pp_degree = 4;
  j.dp_degree = 2;
  j.tp_degree = 1;
  j.world_size = 8;
  const auto when = std::chrono::system_clock::from_time_t(1714557045);  // 2024-05-01 09:50:45 UTC
  EXPECT_EQ(make_job_id(j, "PointSolution", when), "2024-05-01-09-50-45+dp2+pp4+tp1+PointSolution");
  j.job_metadata = "gpt3";
  EXPECT_EQ(make_job_id(j, "PointSolution3D", when),
            "2024-05-01-09-50-45+dp2+pp4+tp1+PointSolution3D+gpt3");
  EXPECT_EQ(job_path(kRegisterRankPath, "2024-05-01-09-50-45+dp2+pp4+tp1+P+a b"),
            "/register_rank/2024-05-01-09-50-45+dp2+pp4+tp1+P+a%20b");
}

}  // namespace
}  // namespace zeus::pipeline_frequency
