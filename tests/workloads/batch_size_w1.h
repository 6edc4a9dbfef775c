// The jobs of the bso-w1 workload (docs/bso-service.md, "Load test"), shared
// by the load test (bench/bso_load.cc) and the service tests, so both
// register the same jobs.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace zeus::batch_size::w1 {

inline const std::vector<int> kBatchSizes = {16, 32, 64, 128, 256, 512, 1024, 2048};

// "w1-007" for j = 7.
inline std::string job_id(int j) { return fmt::format("w1-{:03d}", j); }

// The POST /jobs body of the j-th job.
inline nlohmann::json workload_spec(int j) {
  return {{"job_id", job_id(j)},
          {"job_id_prefix", "w1"},
          {"batch_sizes", kBatchSizes},
          {"default_batch_size", 256},
          {"eta_knob", 0.5},
          {"beta_knob", 2.0},
          {"target_metric", 0.5},
          {"higher_is_better_metric", true},
          {"max_epochs", 20},
          {"num_pruning_rounds", 2},
          {"window_size", 10},
          {"mab_prior_mean", 0.0},
          {"mab_prior_precision", 0.0},
          {"mab_num_explorations", 2},
          {"mab_seed", j},
          {"max_power", 300.0},
          {"number_of_gpus", 1},
          {"gpu_model", "A100-SXM4-40GB"}};
}

}  // namespace zeus::batch_size::w1
