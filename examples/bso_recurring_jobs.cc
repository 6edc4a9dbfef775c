// Recurring training jobs driven through the batch-size optimizer service with
// the C++ client (`make run` shows it). Each job recurs; each run asks the
// server for a batch size, "trains" on a simulated GPU whose clock is a
// ManualClock (an epoch takes no real time), reports every epoch, and stops
// when told. The synthetic model is the load test's (docs/bso-service.md):
// epochs to the target grow with the distance from a job-specific best batch
// size, and 16 and 2048 never converge. Prints the batch sizes each job
// settles on.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <map>

#include "zeus/device/devices.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/optimizer/batch_size/client/client.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace {

int epochs_to_target(int job, int b) {
  const int best = std::array<int, 4>{64, 128, 256, 512}[job % 4];
  return 4 + 2 * std::abs(static_cast<int>(std::log2(b)) - static_cast<int>(std::log2(best)));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Recurring jobs through the batch-size optimizer service (simulated GPUs)"};
  std::string url = "http://127.0.0.1:8000";
  int jobs = 3, recurrences = 30;
  app.add_option("--url", url, "The zeus bso serve address")->capture_default_str();
  app.add_option("--jobs", jobs, "Recurring jobs")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--recurrences", recurrences, "Runs per job")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  zeus::log::set_level(zeus::log::Level::kWarn);
  try {
    zeus::ManualClock clock;
    zeus::device::DiscoveryOptions d;
    d.gpu_backend = "sim";
    d.sim_gpus = 1;
    d.clock = &clock;
    d.cpus = false;
    const auto devices = zeus::device::discover_devices(d);
    auto* gpu = dynamic_cast<zeus::device::SimGpu*>(devices.gpus.at(0).get());
    zeus::monitor::EnergyMonitorOptions mo;
    mo.clock = &clock;
    zeus::monitor::EnergyMonitor monitor(devices, mo);
    for (int j = 0; j < jobs; ++j) {
      zeus::batch_size::JobSpec spec;
      spec.job_id = fmt::format("demo-{}", j);
      spec.job_id_prefix = "demo";
      spec.batch_sizes = {16, 32, 64, 128, 256, 512, 1024, 2048};
      spec.default_batch_size = 256;
      spec.max_epochs = 20;
      spec.window_size = 10;
      spec.mab_seed = j;
      std::vector<int> chosen;
      for (int r = 0; r < recurrences; ++r) {
        zeus::batch_size::BatchSizeOptimizer opt(monitor, url, spec);
        const int b = opt.get_batch_size();
        chosen.push_back(b);
        // Bigger batches keep the GPU busier; time per epoch shrinks with sqrt(b).
        gpu->set_load(std::min(1.0, 0.3 + 0.1 * std::log2(b / 16.0)));
        const int target = (b == 16 || b == 2048) ? 1000 : epochs_to_target(j, b);
        opt.on_train_begin();
        try {
          for (int e = 1; !opt.training_finished(); ++e) {
            clock.advance(zeus::Seconds(100.0 * std::sqrt(256.0 / b)));
            opt.on_evaluate(e >= target ? 0.6 : 0.4 * e / target);
          }
        } catch (const zeus::Error& e) {
          if (e.code() != zeus::ErrorCode::kFailedPrecondition) throw;  // did not converge
        }
      }
      std::map<int, int> last;
      const std::size_t tail = std::min<std::size_t>(10, chosen.size());
      for (std::size_t i = chosen.size() - tail; i < chosen.size(); ++i) ++last[chosen[i]];
      const auto settled = std::max_element(last.begin(), last.end(),
                                            [](auto& a, auto& b) { return a.second < b.second; });
      fmt::print("job {}: batch sizes {}\n", spec.job_id, fmt::join(chosen, " "));
      fmt::print("job {}: settled on batch size {} ({} of the last {} runs)\n", spec.job_id,
                 settled->first, settled->second, tail);
    }
  } catch (const zeus::Error& e) {
    fmt::print(stderr, "bso_recurring_jobs: {}\n", e.what());
    return zeus::exit_code_for(e.code());
  }
  return 0;
}
