// The Alibaba group trace: parsing (plain and .xz), and the replay of one
// group's concurrent recurring jobs on a generated trace.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "support/temp_dir.h"
#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/sim/alibaba.h"
#include "zeus/sim/simulator.h"
#include "zeus/sim/trace.h"
#include "zeus/util/error.h"

namespace zeus::sim {
namespace {

namespace bs = zeus::batch_size;
using ::zeus::testing::TempDir;

const std::string kTraces = std::string(ZEUS_SOURCE_DIR) + "/data/zeus-traces";

WorkloadTrace trace(const std::string& gpu, const std::string& workload) {
  static const TraceSet t = TraceSet::load(kTraces, trace_gpus());
  return t.workload(gpu, find_workload(workload));
}

constexpr const char* kSample =
    "group,start_time,end_time,dataset,runtime_ratio\n"
    "g2,50,80,squad,1.0\n"
    "g1,300,400,imagenet,2.0\n"
    "g1,100,200,imagenet,0.5\n";

TEST(GroupTrace, GroupsInOrderOfAppearanceJobsByStartTime) {
  const auto groups = parse_group_trace(kSample, "sample");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].group, "g2");
  EXPECT_EQ(groups[1].dataset, "imagenet");
  ASSERT_EQ(groups[1].jobs.size(), 2u);
  EXPECT_EQ(groups[1].jobs[0].start_time, 100);
  EXPECT_EQ(groups[1].jobs[0].runtime_ratio, 0.5);
  EXPECT_EQ(groups[1].jobs[1].end_time, 400);
}

TEST(GroupTrace, BadRowsNameTheLine) {
  const std::string h = "group,start_time,end_time,dataset,runtime_ratio\n";
  for (const auto& [body, what] : std::vector<std::pair<std::string, std::string>>{
           {"g,5,5,squad,1\n", "sample:2: end_time 5 is not after start_time 5"},
           {"g,1,5,squad,0\n", "sample:2: runtime_ratio must be positive"},
           {"g,1,5,squad,1\ng,6,9,cifar100,1\n", "sample:3: group g has two datasets"},
           {"g,x,5,squad,1\n", "sample"}}) {
    try {
      parse_group_trace(h + body, "sample");
      ADD_FAILURE() << body;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kParse) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parse_group_trace("group,start_time\ng,1\n", "sample"), Error);
}

TEST(GroupTrace, ReadsPlainAndXz) {
  TempDir tmp("zeus_alibaba");
  const std::string csv = (tmp / "groups.csv").string();
  std::ofstream(csv) << kSample;
  ASSERT_EQ(std::system(("xz -k -z " + csv).c_str()), 0) << "xz-utils is needed";
  const auto plain = read_group_trace(csv);
  const auto xz = read_group_trace(csv + ".xz");
  ASSERT_EQ(plain.size(), xz.size());
  EXPECT_EQ(xz[1].jobs[1].end_time, 400);
  std::ofstream(tmp / "bad.csv.xz") << "not xz";
  try {
    read_group_trace((tmp / "bad.csv.xz").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParse);
    EXPECT_NE(std::string(e.what()).find("not a valid .xz file"), std::string::npos);
  }
}

TEST(GroupTrace, Adler32IsZlibs) {
  EXPECT_EQ(adler32("Wikipedia"), 0x11E60398u);
  EXPECT_EQ(adler32(""), 1u);
}

SimResult replay(const std::string& policy, const JobGroup& g, std::uint64_t seed = 1) {
  const auto t = trace("v100", "imagenet/resnet50");
  SimOptions o;
  o.seed = seed;
  const auto& info = bs::PolicyRegistry::global().find(policy);
  bs::Policy p = info.make(policy_context(t, o));
  return simulate_group(t, g, p, info.name, info.early_stopping, o);
}

TEST(GroupReplay, RunsEndInOrderAndAreScaledByTheRuntimeRatio) {
  JobGroup g{"g", "imagenet", {{0, 10, 1.0}, {1e9, 1e9 + 10, 1.0}, {2e9, 2e9 + 10, 1.0}}};
  const SimResult one = replay("default", g);
  for (auto& j : g.jobs) j.runtime_ratio = 3.0;
  const SimResult three = replay("default", g);
  ASSERT_EQ(one.runs.size(), 3u);  // b0 always reaches: one run per job
  ASSERT_EQ(three.runs.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(one.runs[i].batch_size, 256);
    EXPECT_DOUBLE_EQ(three.runs[i].energy.value(), 3.0 * one.runs[i].energy.value());
    EXPECT_DOUBLE_EQ(three.runs[i].time.count(), 3.0 * one.runs[i].time.count());
    EXPECT_EQ(three.runs[i].cost.value(),
              one.runs[i].cost.value());  // the policy's cost is unscaled
  }
  EXPECT_TRUE(one.recurrences.empty());
}

TEST(GroupReplay, JobsSubmittedWhileOthersRunUseTheBestKnownBatchSize) {
  // Four jobs at once: the first is the policy's (b0, profiled), the others
  // run concurrently at the best-known batch size, b0 before any success.
  JobGroup g{"g", "imagenet", {{0, 100, 1}, {1, 100, 1}, {2, 100, 1}, {3, 100, 1}, {500, 600, 1}}};
  const SimResult r = replay("zeus", g);
  ASSERT_GE(r.runs.size(), 5u);
  int concurrent = 0;
  for (const auto& run : r.runs) {
    if (run.kind == bs::TrialKind::kConcurrent) {
      ++concurrent;
      EXPECT_EQ(run.batch_size, 256);
      EXPECT_FALSE(run.profiled);
    }
  }
  EXPECT_EQ(concurrent, 3);
  // The fifth job starts alone, after b0 reached: the search's next choice.
  EXPECT_EQ(r.runs.back().kind, bs::TrialKind::kExploration);
}

TEST(GroupReplay, SameSeedSameHistory) {
  const auto groups = parse_group_trace(
      "group,start_time,end_time,dataset,runtime_ratio\n"
      "a,0,50,imagenet,1\na,20,90,imagenet,1.5\na,200,260,imagenet,0.7\na,230,300,imagenet,1\n"
      "a,400,450,imagenet,1\na,600,700,imagenet,1\na,800,820,imagenet,1\n",
      "t");
  const SimResult a = replay("zeus", groups[0], 7), b = replay("zeus", groups[0], 7);
  ASSERT_EQ(a.runs.size(), b.runs.size());
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    EXPECT_EQ(a.runs[i].batch_size, b.runs[i].batch_size);
    EXPECT_EQ(a.runs[i].energy.value(), b.runs[i].energy.value());
  }
}

TEST(GroupReplay, APolicyThatNeverReachesIsStoppedNamingTheGroup) {
  // Every run is capped below one epoch after the first success.
  const auto t = trace("v100", "imagenet/resnet50");
  class Flip final : public bs::BatchSizePolicy {
   public:
    bs::BatchSizeChoice predict() override { return {0, n_++ == 0 ? 256 : 64, {}}; }
    void observe(const bs::BatchSizeChoice&, Joules, bool) override {}

   private:
    int n_ = 0;
  };
  bs::Policy p{std::make_unique<Flip>(), bs::make_jit_power_limit_policy()};
  SimOptions o;
  o.beta = 0.01;
  JobGroup g{"grp-1", "imagenet", {{0, 10, 1}, {100, 110, 1}}};
  try {
    simulate_group(t, g, p, "flip", true, o);
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("policy 'flip'"), std::string::npos) << m;
    EXPECT_NE(m.find("group grp-1"), std::string::npos) << m;
    EXPECT_NE(m.find("failed 20 tries"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace zeus::sim
