// The power-limit optimizer on 4 MPI ranks, each with its own simulated GPU
// and ManualClock. Rank r does (1 + r/10) times the base work per step, so the
// ranks' times differ. Checks: the MpiReducer's sum and max, every rank's
// measurements equal the sum of all ranks' energies and the max of their
// times (gathered independently with MPI_Allgather), and all ranks choose the
// same limit. Exits non-zero on any failure.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "zeus/device/sim_gpu.h"
#include "zeus/monitor/energy_monitor.h"
#include "zeus/optimizer/power_limit/mpi/mpi_reducer.h"
#include "zeus/optimizer/power_limit/power_limit_optimizer.h"

namespace {

int failures = 0;
int my_rank = 0;

void check(bool ok, const char* what, double got = 0, double want = 0) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAILED %s (got %.9g, want %.9g)\n", my_rank, what, got, want);
    ++failures;
  }
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::fabs(b); }

int run() {
  zeus::power_limit::MpiReducer reducer;
  my_rank = reducer.rank();
  const int size = reducer.world_size();
  check(size == 4, "world size is 4", size, 4);
  check(reducer.all_reduce_sum(my_rank + 1.0) == size * (size + 1) / 2.0, "sum of ranks");
  check(reducer.all_reduce_max(static_cast<double>(my_rank)) == size - 1.0, "max of ranks");

  zeus::device::SimGpuModel model;
  model.power_limit_min = zeus::Watts(100.0);
  model.counter_update_period = zeus::Seconds(0.0);
  zeus::ManualClock clock;
  auto sim = std::make_shared<zeus::device::SimGpu>(model, clock, 0);
  zeus::device::DeviceInventory inventory;
  inventory.gpus.push_back(sim);
  inventory.gpu_physical_indices.push_back(0);
  inventory.gpu_backend = "sim";
  zeus::monitor::EnergyMonitorOptions monitor_options;
  monitor_options.clock = &clock;
  monitor_options.cpu_indices = std::vector<int>{};
  zeus::monitor::EnergyMonitor monitor(inventory, monitor_options);

  zeus::power_limit::GlobalPowerLimitOptimizerOptions options;
  options.warmup_steps = 2;
  options.profile_steps = 5;
  options.pl_step = zeus::Watts(50.0);
  options.reducer = &reducer;
  zeus::power_limit::GlobalPowerLimitOptimizer optimizer(monitor, options);
  check(optimizer.selector().name() == "zeus-cost(eta=0.5, world_size=4)",
        "default selector counts the GPUs of all ranks");

  const double work = 40.0 * (1.0 + my_rank / 10.0);
  for (int step = 0; step < 1000 && !optimizer.done(); ++step) {
    optimizer.on_step_begin();
    clock.advance(zeus::Seconds(work / sim->throughput()));
  }
  check(optimizer.done(), "profiling finished");
  if (!optimizer.done()) return 1;

  const auto& ms = optimizer.measurements();
  check(ms.size() == optimizer.candidate_limits().size(), "one measurement per candidate");
  for (const auto& m : ms) {
    // This rank's own share, from the model; gathered from every rank.
    const double t_local = options.profile_steps * work / model.throughput_at(m.power_limit);
    const double e_local = model.power_at(m.power_limit).value() * t_local;
    std::vector<double> times(static_cast<std::size_t>(size)), energies(times.size());
    MPI_Allgather(&t_local, 1, MPI_DOUBLE, times.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgather(&e_local, 1, MPI_DOUBLE, energies.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
    double e_sum = 0, t_max = 0;
    for (int r = 0; r < size; ++r) {
      e_sum += energies[static_cast<std::size_t>(r)];
      t_max = std::max(t_max, times[static_cast<std::size_t>(r)]);
    }
    check(close(m.energy.value(), e_sum), "energy is the sum over ranks", m.energy.value(), e_sum);
    check(close(m.time.count(), t_max), "time is the slowest rank's", m.time.count(), t_max);
    check(t_max == times.back(), "rank 3 is the slowest");
  }

  const double chosen = static_cast<double>(optimizer.optimal_power_limit()->value());
  std::vector<double> all(static_cast<std::size_t>(size));
  MPI_Allgather(&chosen, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
  for (double c : all) check(c == chosen, "every rank chose the same limit", c, chosen);
  check(sim->power_limit().value() == optimizer.optimal_power_limit()->value(),
        "the chosen limit is set on this rank's GPU");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    rc = run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: exception: %s\n", my_rank, e.what());
    rc = 1;
  }
  if (failures > 0) rc = 1;
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (my_rank == 0) {
    std::printf("power_limit_mpi_test: %s\n", worst == 0 ? "all ranks passed" : "FAILED");
  }
  MPI_Finalize();
  return worst;
}
