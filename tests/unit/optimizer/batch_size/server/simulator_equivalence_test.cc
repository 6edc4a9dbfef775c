// One policy implementation: a recurring job from the paper's traces, replayed
// by the simulator and driven through the HTTP API with the same seed, gets
// the same batch size on every run.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "unit/optimizer/batch_size/service_test_helpers.h"
#include "zeus/sim/simulator.h"
#include "zeus/sim/trace.h"

namespace zeus::batch_size {
namespace {

using http::Method;
using nlohmann::json;
using testing::call;

TEST(BatchSizeServiceTest, SameBatchSizesAsTheSimulatorOnAPaperTrace) {
  const auto traces =
      sim::TraceSet::load(std::string(ZEUS_SOURCE_DIR) + "/data/zeus-traces", sim::trace_gpus());
  for (const auto& [gpu, workload, seed] :
       std::vector<std::tuple<std::string, std::string, std::uint64_t>>{
           {"v100", "imagenet/resnet50", 3}, {"a40", "cifar100/shufflenetv2", 11}}) {
    const auto trace = traces.workload(gpu, sim::find_workload(workload));
    sim::SimOptions o;
    o.seed = seed;
    // The service stops a run on its own cost bound (every trial's cost, the
    // upstream rule); the paper simulator on its recurrences' costs. Without
    // early stopping both see identical outcomes.
    o.beta = std::numeric_limits<double>::infinity();
    const auto sim = sim::simulate(trace, sim::Strategy::kZeus, o);

    testing::TempDir d;
    testing::ServedBso server("sqlite:///" + d.path() + "/bso.db");
    auto c = server.client();
    json spec = {{"job_id", "trace-1"},
                 {"job_id_prefix", "trace"},
                 {"batch_sizes", trace.batch_size_list()},
                 {"default_batch_size", trace.default_batch_size},
                 {"eta_knob", o.eta},
                 {"beta_knob", nullptr},
                 {"target_metric", 1.0},
                 {"max_epochs", 100},
                 {"window_size", o.window_size},
                 {"num_pruning_rounds", o.num_pruning_rounds},
                 {"mab_seed", seed},
                 {"max_power", trace.max_power.value()},
                 {"number_of_gpus", 1},
                 {"gpu_model", gpu}};
    int status = 0;
    call(c, Method::kPost, "/jobs", spec, &status);
    ASSERT_EQ(status, 201);
    std::vector<int> simulated, served;
    for (const auto& run : sim.runs) {
      ASSERT_FALSE(run.could_not_run);
      simulated.push_back(run.batch_size);
      const auto t = call(c, Method::kGet, "/jobs/batch_size?job_id=trace-1", nullptr, &status);
      ASSERT_EQ(status, 200);
      served.push_back(t["batch_size"]);
      const auto r = call(c, Method::kPost, "/report",
                          {{"job_id", "trace-1"},
                           {"batch_size", t["batch_size"]},
                           {"trial_number", t["trial_number"]},
                           {"time", run.time.count()},
                           {"energy", run.energy.value()},
                           {"metric", run.reached ? 1.0 : 0.0},
                           {"current_epoch", 100}},
                          &status);
      ASSERT_EQ(r["converged"], run.reached);
    }
    EXPECT_GT(simulated.size(), 40u);
    EXPECT_EQ(served, simulated) << gpu << " " << workload;
  }
}

}  // namespace
}  // namespace zeus::batch_size
