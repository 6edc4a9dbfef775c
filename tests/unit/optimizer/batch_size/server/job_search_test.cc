// JobSearch: the built-in search and a registered policy behind one interface,
// each surviving the stores' round trip through its JSON state.
#include "zeus/optimizer/batch_size/server/job_search.h"

#include <gtest/gtest.h>

#include "optimizer/batch_size/state_json.h"
#include "unit/optimizer/batch_size/service_test_helpers.h"

namespace zeus::batch_size {
namespace {

JobSpec spec_with_policy(const std::string& policy) {
  nlohmann::json j = testing::workload_spec(1);
  if (!policy.empty()) j["policy"] = policy;
  return parse_job_spec(j, "test job");
}

BatchSizeSearchOptions builtin_options(const JobSpec& spec) {
  BatchSizeSearchOptions o;
  o.batch_sizes = spec.batch_sizes;
  o.default_batch_size = spec.default_batch_size;
  o.seed = 7;
  return o;
}

// Two trials, the first reported: a copy made from the JSON state then
// decides exactly as the original does.
void expect_round_trip(const JobSpec& spec, JobSearch search) {
  const Trial first = search.next_trial();
  const Trial second = search.next_trial();
  EXPECT_EQ(search.num_in_flight(), 2u);
  search.report(first.id, Joules(100.0), true);
  EXPECT_FALSE(search.is_in_flight(first.id));
  EXPECT_TRUE(search.is_in_flight(second.id));
  ASSERT_TRUE(search.min_cost().has_value());

  JobSearch restored = JobSearch::from_json(spec, nlohmann::json::parse(search.to_json().dump()));
  EXPECT_EQ(restored.num_in_flight(), 1u);
  EXPECT_TRUE(restored.is_in_flight(second.id));
  EXPECT_EQ(restored.min_cost()->value(), search.min_cost()->value());
  for (int i = 0; i < 4; ++i) {
    const Trial a = search.next_trial();
    const Trial b = restored.next_trial();
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.batch_size, b.batch_size);
    search.report(a.id, Joules(50.0 + i), false);
    restored.report(b.id, Joules(50.0 + i), false);
  }
  search.cancel(second.id);
  EXPECT_FALSE(search.is_in_flight(second.id));
}

TEST(BatchSizeJobSearchTest, TheBuiltInSearchRoundTripsThroughItsState) {
  const JobSpec spec = spec_with_policy("");
  JobSearch search(BatchSizeSearch(builtin_options(spec)));
  EXPECT_FALSE(search.to_json().contains("plugged"));
  expect_round_trip(spec, std::move(search));
}

TEST(BatchSizeJobSearchTest, ARegisteredPolicyRoundTripsThroughItsDecisionLog) {
  const JobSpec spec = spec_with_policy("default");
  JobSearch search(PluggedSearch(spec, 7));
  EXPECT_TRUE(search.to_json().contains("plugged"));
  expect_round_trip(spec, std::move(search));
}

}  // namespace
}  // namespace zeus::batch_size
