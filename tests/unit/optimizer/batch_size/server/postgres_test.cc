// Replicas: two servers on one real PostgreSQL database (a throwaway cluster
// started by the test) under concurrent clients. Per-job row locks must keep
// every trial number unique, hand out each pruning exploration once, and
// store every report.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>

#include "unit/optimizer/batch_size/service_test_helpers.h"
#include "zeus/util/error.h"

namespace zeus::batch_size {
namespace {

using http::Method;
using nlohmann::json;
using testing::call;

#define START_POSTGRES_OR_SKIP(var)                                                      \
  auto var = testing::PostgresCluster::start();                                          \
  if (!var) {                                                                            \
    GTEST_SKIP() << "PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb) are " \
                    "not installed; bash scripts/setup.sh installs them";                \
  }

TEST(BatchSizePostgresTest, TwoReplicasNeitherDuplicateTrialsNorLoseReports) {
  START_POSTGRES_OR_SKIP(pg);
  const std::string url = pg->url("replicas");
  testing::ServedBso a(url), b(url);
  {
    auto ca = a.client(), cb = b.client();
    int status = 0;
    call(ca, Method::kPost, "/jobs", testing::workload_spec(0), &status);
    EXPECT_EQ(status, 201);
    call(cb, Method::kPost, "/jobs", testing::workload_spec(0), &status);
    EXPECT_EQ(status, 200);  // the other replica sees it
  }
  constexpr int kThreads = 8, kTrialsEach = 12;
  std::atomic<int> errors{0};
  std::vector<std::future<std::vector<int>>> workers;
  for (int w = 0; w < kThreads; ++w) {
    workers.push_back(std::async(std::launch::async, [&, w] {
      auto c = (w % 2 == 0 ? a : b).client();
      std::vector<int> numbers;
      for (int i = 0; i < kTrialsEach; ++i) {
        int status = 0;
        const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-000", nullptr, &status);
        if (status != 200) {
          ++errors;
          continue;
        }
        numbers.push_back(t["trial_number"]);
        const int bs = t["batch_size"];
        const double metric = (bs == 16 || bs == 2048) ? 0.3 : 0.6;
        json report = {
            {"job_id", "w1-000"}, {"batch_size", bs},       {"trial_number", t["trial_number"]},
            {"time", 100.0 + bs}, {"energy", 30000.0 - bs}, {"metric", metric},
            {"current_epoch", 20}};
        const auto r = call(c, Method::kPost, "/report", report, &status);
        if (status != 200 || r["stop_train"] != true) ++errors;
      }
      return numbers;
    }));
  }
  std::set<int> numbers;
  for (auto& f : workers) {
    for (int n : f.get()) EXPECT_TRUE(numbers.insert(n).second) << "trial " << n << " twice";
  }
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(numbers.size(), static_cast<std::size_t>(kThreads * kTrialsEach));
  EXPECT_EQ(*numbers.rbegin(), kThreads * kTrialsEach);
  EXPECT_EQ(pg->query("replicas", "SELECT count(*) FROM trials WHERE status = 'Succeeded'"),
            std::to_string(kThreads * kTrialsEach));
  // Two pruning rounds: no batch size explored more than twice.
  const auto most =
      pg->query("replicas",
                "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM trials WHERE kind = "
                "'exploration' GROUP BY batch_size) AS e");
  EXPECT_LE(std::stoi(most), 2) << most;
  const auto explorations =
      pg->query("replicas", "SELECT count(*) FROM trials WHERE kind = 'exploration'");
  EXPECT_GE(std::stoi(explorations), 4);
}

TEST(BatchSizePostgresTest, StateSurvivesAndNewerSchemasAreRefused) {
  START_POSTGRES_OR_SKIP(pg);
  const std::string url = pg->url("schema");
  {
    testing::ServedBso s(url);
    auto c = s.client();
    int status = 0;
    call(c, Method::kPost, "/jobs", testing::workload_spec(1), &status);
    const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-001", nullptr, &status);
    EXPECT_EQ(t["trial_number"], 1);
  }
  {
    testing::ServedBso s(url);
    auto c = s.client();
    int status = 0;
    const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-001", nullptr, &status);
    EXPECT_EQ(t["trial_number"], 2);
  }
  pg->query("schema", "INSERT INTO zeus_bso_schema VALUES (42)");
  try {
    testing::ServedBso s(url);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 42"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zeus::batch_size
