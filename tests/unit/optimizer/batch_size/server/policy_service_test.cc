// A registered policy chosen per job in the batch-size service ("policy" in
// the job spec): it decides the batch sizes, survives a restart (its
// decisions are replayed), and unknown or broken policies are clear errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "unit/optimizer/batch_size/service_test_helpers.h"
#include "zeus/optimizer/batch_size/policy.h"

namespace zeus::batch_size {
namespace {

namespace bs = zeus::batch_size;
using http::Method;
using nlohmann::json;
using testing::call;
using ::testing::HasSubstr;
using testing::ServedBso;
using testing::TempDir;
using testing::workload_spec;

// Every batch size once (ascending), then the cheapest mean cost seen.
class TryAllThenCheapest final : public bs::BatchSizePolicy {
 public:
  explicit TryAllThenCheapest(const bs::PolicyContext& c) : sizes_(c.batch_sizes) {}
  bs::BatchSizeChoice predict() override {
    if (next_ < sizes_.size()) return {0, sizes_[next_++], bs::TrialKind::kExploration};
    int best = sizes_.front();
    double best_mean = 1e300;
    for (const auto& [b, s] : seen_) {
      if (s.first / s.second < best_mean) {
        best_mean = s.first / s.second;
        best = b;
      }
    }
    return {0, best, bs::TrialKind::kSampling};
  }
  void observe(const bs::BatchSizeChoice& c, Joules cost, bool) override {
    auto& s = seen_[c.batch_size];
    s.first += cost.value();
    s.second += 1;
  }

 private:
  std::vector<int> sizes_;
  std::size_t next_ = 0;
  std::map<int, std::pair<double, int>> seen_;
};

class Outside final : public bs::BatchSizePolicy {
 public:
  bs::BatchSizeChoice predict() override { return {0, 3, bs::TrialKind::kExploration}; }
  void observe(const bs::BatchSizeChoice&, Joules, bool) override {}
};

void register_policies() {
  static const bool once = [] {
    auto& r = bs::PolicyRegistry::global();
    r.add({"try-all", "each batch size once, then the cheapest", true,
           [](const bs::PolicyContext& c) {
             return bs::Policy{std::make_unique<TryAllThenCheapest>(c), nullptr};
           }});
    r.add({"outside", "a batch size the job does not have", true, [](const bs::PolicyContext&) {
             return bs::Policy{std::make_unique<Outside>(), nullptr};
           }});
    return true;
  }();
  (void)once;
}

std::string sqlite_url(const TempDir& d) { return "sqlite:///" + d.path() + "/bso.db"; }

json with_policy(int j, const std::string& policy) {
  json spec = workload_spec(j);
  spec["policy"] = policy;
  return spec;
}

// Asks for `n` batch sizes, reporting each as converged with a cost that
// makes 64 the cheapest.
void drive(http::Client& c, const std::string& job, int n, std::vector<int>& sizes) {
  int status = 0;
  for (int i = 0; i < n; ++i) {
    const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=" + job, nullptr, &status);
    ASSERT_EQ(status, 200) << t.dump();
    const int b = t["batch_size"];
    sizes.push_back(b);
    const double energy = b == 64 ? 1000.0 : 5000.0 + b;
    call(c, Method::kPost, "/report",
         {{"job_id", job},
          {"batch_size", b},
          {"trial_number", t["trial_number"]},
          {"time", 10.0},
          {"energy", energy},
          {"metric", 0.9},
          {"current_epoch", 3}},
         &status);
    ASSERT_EQ(status, 200);
  }
}

TEST(BatchSizePolicyTest, AJobChoosesItsPolicyAndItSurvivesARestart) {
  register_policies();
  TempDir d;
  std::vector<int> sizes;
  {
    ServedBso s(sqlite_url(d));
    auto c = s.client();
    int status = 0;
    const auto body = call(c, Method::kPost, "/jobs", with_policy(3, "try-all"), &status);
    ASSERT_EQ(status, 201) << body.dump();
    EXPECT_EQ(body["policy"], "try-all");
    drive(c, "w1-003", 5, sizes);
  }
  {
    ServedBso s(sqlite_url(d));
    auto c = s.client();
    drive(c, "w1-003", 6, sizes);
  }
  // Eight sizes ascending (across the restart), then the cheapest, 64.
  EXPECT_EQ(sizes, (std::vector<int>{16, 32, 64, 128, 256, 512, 1024, 2048, 64, 64, 64}));
  // A job without "policy" still gets the built-in search: b0 first.
  TempDir d2;
  ServedBso s(sqlite_url(d2));
  auto c = s.client();
  int status = 0;
  const auto body = call(c, Method::kPost, "/jobs", workload_spec(4), &status);
  EXPECT_FALSE(body.contains("policy"));
  const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-004", nullptr, &status);
  EXPECT_EQ(t["batch_size"], 256);
}

TEST(BatchSizePolicyTest, TrialsInFlightAcrossARestartAreReportedToThePolicy) {
  register_policies();
  TempDir d;
  int status = 0;
  json first, second;
  {
    ServedBso s(sqlite_url(d));
    auto c = s.client();
    call(c, Method::kPost, "/jobs", with_policy(8, "try-all"), &status);
    first = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-008", nullptr, &status);
    second = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-008", nullptr, &status);
    EXPECT_EQ(first["batch_size"], 16);
    EXPECT_EQ(second["batch_size"], 32);
  }
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  // Both are still in flight after the restart: reports are taken and reach
  // the policy (32 cheap, 16 dear), a failed mark is accepted.
  for (const auto& [t, energy] : {std::pair{second, 100.0}, std::pair{first, 90000.0}}) {
    const auto r = call(c, Method::kPost, "/report",
                        {{"job_id", "w1-008"},
                         {"batch_size", t["batch_size"]},
                         {"trial_number", t["trial_number"]},
                         {"time", 1.0},
                         {"energy", energy},
                         {"metric", 0.9},
                         {"current_epoch", 1}},
                        &status);
    ASSERT_EQ(status, 200) << r.dump();
    EXPECT_EQ(r["stop_train"], true) << r.dump();
  }
  std::vector<int> sizes;
  drive(c, "w1-008", 7, sizes);
  // The other six sizes, then the cheapest: 32 (mean 100 J energy) beats 64's.
  EXPECT_EQ(sizes, (std::vector<int>{64, 128, 256, 512, 1024, 2048, 32}));
}

TEST(BatchSizePolicyTest, UnknownPoliciesAre400AndBrokenOnesNameThemselves) {
  register_policies();
  TempDir d;
  ServedBso s(sqlite_url(d));
  auto c = s.client();
  int status = 0;
  auto body = call(c, Method::kPost, "/jobs", with_policy(5, "nope"), &status);
  EXPECT_EQ(status, 400) << body.dump();
  EXPECT_THAT(body.dump(), HasSubstr("unknown policy 'nope'; known policies: "));
  EXPECT_THAT(body.dump(), HasSubstr("zeus"));
  // A simulator-only policy (grid search needs power limits) is refused at registration.
  body = call(c, Method::kPost, "/jobs", with_policy(7, "grid"), &status);
  EXPECT_EQ(status, 400) << body.dump();
  EXPECT_THAT(body.dump(), HasSubstr("no power limits are known"));
  body = call(c, Method::kPost, "/jobs", with_policy(6, "outside"), &status);
  ASSERT_EQ(status, 201) << body.dump();
  body = call(c, Method::kGet, "/jobs/batch_size?job_id=w1-006", nullptr, &status);
  EXPECT_EQ(status, 500) << body.dump();
  EXPECT_THAT(body.dump(), HasSubstr("policy 'outside' of job w1-006 predicted batch size 3"));
}

}  // namespace
}  // namespace zeus::batch_size
