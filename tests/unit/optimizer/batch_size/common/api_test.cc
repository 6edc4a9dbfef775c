// The wire format: defaults, validation, what is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "unit/optimizer/batch_size/service_test_helpers.h"
#include "util/json.h"
#include "zeus/optimizer/batch_size/common/api.h"

namespace zeus::batch_size {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json minimal() {
  return {{"job_id_prefix", "mnist"}, {"batch_sizes", {64, 32, 128}}, {"default_batch_size", 64},
          {"max_power", 300.0},       {"number_of_gpus", 1},          {"gpu_model", "A40"}};
}

TEST(BatchSizeApiTest, DefaultsFollowUpstream) {
  const JobSpec s = parse_job_spec(minimal());
  EXPECT_EQ(s.job_id, "");
  EXPECT_EQ(s.batch_sizes, (std::vector<int>{32, 64, 128}));  // sorted
  EXPECT_EQ(s.eta_knob, 0.5);
  EXPECT_EQ(s.beta_knob, 2.0);
  EXPECT_EQ(s.target_metric, 0.5);
  EXPECT_TRUE(s.higher_is_better_metric);
  EXPECT_EQ(s.max_epochs, 100);
  EXPECT_EQ(s.num_pruning_rounds, 2);
  EXPECT_EQ(s.window_size, 0);
  EXPECT_EQ(s.mab_num_explorations, 2);
  EXPECT_FALSE(s.mab_seed.has_value());
  const json echo = to_json(s);
  EXPECT_TRUE(echo["job_id"].is_null());
  EXPECT_EQ(parse_job_spec([&] {
              json j = echo;
              j.erase("job_id");
              return j;
            }()),
            s);
}

TEST(BatchSizeApiTest, NullBetaDisablesEarlyStopping) {
  json j = minimal();
  j["beta_knob"] = nullptr;
  EXPECT_FALSE(parse_job_spec(j).beta_knob.has_value());
  EXPECT_TRUE(to_json(parse_job_spec(j))["beta_knob"].is_null());
}

void expect_refused(const std::function<void(json&)>& edit, const std::string& field) {
  json j = minimal();
  edit(j);
  try {
    parse_job_spec(j);
    ADD_FAILURE() << "accepted " << j.dump();
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(BatchSizeApiTest, BadSpecsNameTheField) {
  json future = minimal();
  future["surprise"] = 1;  // a newer client's field: ignored (logged once)
  EXPECT_NO_THROW(parse_job_spec(future));
  expect_refused([](json& j) { j.erase("job_id_prefix"); }, "job_id_prefix");
  expect_refused([](json& j) { j["job_id"] = "other-1"; }, "job_id");
  expect_refused([](json& j) { j["job_id"] = "mnist" + std::string(500, 'x'); }, "job_id");
  expect_refused([](json& j) { j["batch_sizes"] = json::array(); }, "batch_sizes");
  expect_refused([](json& j) { j["batch_sizes"] = {32, 32}; }, "batch_sizes");
  expect_refused([](json& j) { j["batch_sizes"] = {32, "64"}; }, "batch_sizes[1]");
  expect_refused([](json& j) { j["batch_sizes"] = {32, 1e30}; }, "batch_sizes[1]");
  expect_refused([](json& j) { j["batch_sizes"] = {0, 64}; }, "batch_sizes[0]");
  expect_refused([](json& j) { j["default_batch_size"] = 48; }, "default_batch_size");
  expect_refused([](json& j) { j["eta_knob"] = 1.5; }, "eta_knob");
  expect_refused([](json& j) { j["beta_knob"] = 0; }, "beta_knob");
  expect_refused([](json& j) { j["max_epochs"] = 0; }, "max_epochs");
  expect_refused([](json& j) { j["max_epochs"] = 12345678901234.0; }, "max_epochs");
  expect_refused([](json& j) { j["mab_seed"] = -1; }, "mab_seed");
  expect_refused([](json& j) { j["mab_seed"] = 1e300; }, "mab_seed");
  expect_refused([](json& j) { j["max_power"] = -3; }, "max_power");
  expect_refused([](json& j) { j["gpu_model"] = ""; }, "gpu_model");
  expect_refused([](json& j) { j["number_of_gpus"] = true; }, "number_of_gpus");
}

TEST(BatchSizeApiTest, AWronglyTypedDeepValueIsQuotedShortNotSerializedWhole) {
  // Nested 300000 levels (built without recursion): serializing it whole to
  // quote it in the message would overflow the stack.
  json deep = json::array();
  for (int i = 0; i < 300000; ++i) {
    json outer = json::array();
    outer.push_back(std::move(deep));
    deep = std::move(outer);
  }
  json j = minimal();
  j["gpu_model"] = std::move(deep);
  try {
    parse_job_spec(j);
    ADD_FAILURE() << "accepted an array as gpu_model";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "gpu_model");
    EXPECT_THAT(e.what(), HasSubstr("[[[[")) << e.what();
  }
}

TEST(BatchSizeApiTest, ReportsRefuseNegativeAndHugeValues) {
  const json ok = {{"job_id", "a"},  {"batch_size", 32}, {"trial_number", 1}, {"time", 1.5},
                   {"energy", 10.0}, {"metric", 0.1},    {"current_epoch", 1}};
  EXPECT_EQ(parse_training_result(ok).trial.trial_number, 1);
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{{"time", -1.0},
                                                                            {"energy", -0.5},
                                                                            {"energy", 1e300},
                                                                            {"trial_number", 0},
                                                                            {"trial_number", 1e30},
                                                                            {"current_epoch", -1},
                                                                            {"metric", "high"}}) {
    json j = ok;
    j[key] = value;
    EXPECT_THROW(parse_training_result(j), FieldError) << key << "=" << value;
  }
  json extra = ok;
  extra["power"] = 1;  // an unknown field: ignored, as pydantic does
  EXPECT_NO_THROW(parse_training_result(extra));
}

}  // namespace
}  // namespace zeus::batch_size
