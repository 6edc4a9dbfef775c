// Perseus runtime: how long the server takes to answer 64 waiting ranks once
// the last one asks, and what the per-rank controller costs the training
// thread per instruction.
// Reproduce: build/bin/bench_perseus_runtime
//   BM_ServeScheduleTo64Ranks/<io threads>: manual time = from the moment the
//     64th rank's GET is sent (63 already wait at the server) until all 64
//     ranks have read their answers, on loopback, each rank its own thread and
//     keep-alive connection. A round's results are posted outside the timing.
//   BM_OnInstructionBegin/<changes>: one on_instruction_begin on the training
//     thread (schedule lookup, name check, hand-off to the controller thread);
//     changes=1: every instruction asks for a new frequency (a wake-up of the
//     controller), 0: the frequency stays (the common case inside a stage).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench_smoke.h"
#include "http/server.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/http/client.h"
#include "zeus/optimizer/pipeline_frequency/client/pipeline_frequency_optimizer.h"
#include "zeus/optimizer/pipeline_frequency/server/http_api.h"
#include "zeus/optimizer/pipeline_frequency/server/job_manager.h"
#include "zeus/optimizer/pipeline_frequency/server/point_solution.h"
#include "zeus/optimizer/pipeline_frequency/server/three_d_parallel.h"
#include "zeus/util/log.h"

namespace {

namespace pf = zeus::pipeline_frequency;
using Clock = std::chrono::steady_clock;
using zeus::Megahertz;

// One stage's schedule as a 1F1B pipeline of 8 stages x 12 microbatches has it.
std::vector<pf::ScheduleEntry> stage_schedule(bool alternate) {
  std::vector<pf::ScheduleEntry> s;
  for (int m = 0; m < 12; ++m) {
    s.push_back({"forward", Megahertz(alternate ? 1200 : 1410)});
    s.push_back({"backward", Megahertz(1410)});
  }
  return s;
}

struct Server {
  explicit Server(std::unique_ptr<pf::SchedulerFactory> factory, int threads)
      : manager(std::move(factory), options()) {
    zeus::http::Router router;
    pf::add_routes(router, manager);
    zeus::http::ServerOptions so;
    so.threads = threads;
    http = std::make_unique<zeus::http::Server>(std::move(router), so);
    port = http->listen_tcp("127.0.0.1", 0);
    http->start();
  }
  ~Server() {
    manager.shutdown();
    http->shutdown();
  }
  static pf::JobManagerOptions options() {
    pf::JobManagerOptions o;
    o.dump_data = false;
    return o;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  pf::JobManager manager;
  std::unique_ptr<zeus::http::Server> http;
  int port = 0;
};

void BM_ServeScheduleTo64Ranks(benchmark::State& state) {
  constexpr int kStages = 8, kReplicas = 8, kRanks = kStages * kReplicas;
  pf::StagePlan plan(kStages, stage_schedule(true));
  Server server(pf::make_3d_parallel(pf::make_point_solution(plan, "bench")),
                static_cast<int>(state.range(0)));
  pf::ServerClient admin(server.url());
  pf::JobInfo job;
  job.pp_degree = kStages;
  job.dp_degree = kReplicas;
  job.world_size = kRanks;
  const std::string id = admin.register_job(job);
  std::vector<Megahertz> clocks;
  for (int f = 1410; f >= 210; f -= 15) clocks.emplace_back(f);
  for (int r = 0; r < kRanks; ++r) {
    admin.register_rank(id, pf::RankInfo{r, r % kReplicas, r / kReplicas, 0, clocks});
  }

  // Ranks 0..62 ask when told and record when their answer arrived.
  std::mutex mutex;
  std::condition_variable cv;
  int round = 0;
  bool stop = false;
  std::vector<Clock::time_point> answered(kRanks);
  std::atomic<int> done{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r + 1 < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      pf::ServerClient client(server.url());
      int seen = 0;
      for (;;) {
        {
          std::unique_lock lock(mutex);
          cv.wait(lock, [&] { return stop || round > seen; });
          if (stop) return;
          seen = round;
        }
        client.schedule(id, r);
        answered[static_cast<std::size_t>(r)] = Clock::now();
        done.fetch_add(1);
      }
    });
  }
  pf::ServerClient last(server.url());
  for (auto _ : state) {
    done = 0;
    {
      std::lock_guard lock(mutex);
      ++round;
    }
    cv.notify_all();
    while (server.manager.status(id).waiting_requests < kRanks - 1) std::this_thread::yield();
    const auto start = Clock::now();
    last.schedule(id, kRanks - 1);
    answered[kRanks - 1] = Clock::now();
    while (done.load() < kRanks - 1) std::this_thread::yield();
    Clock::time_point end = start;
    for (const auto& t : answered) end = std::max(end, t);
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    // The round's results, untimed, so the next round can start.
    state.PauseTiming();
    for (int r = 0; r < kRanks; ++r) {
      pf::ProfilingResult res;
      res.rank = r;
      res.iter_time = {zeus::Seconds(1.0)};
      res.iter_energy = {zeus::Joules(100.0)};
      admin.report_result(id, res);
    }
    state.ResumeTiming();
  }
  {
    std::lock_guard lock(mutex);
    stop = true;
  }
  cv.notify_all();
  for (auto& t : ranks) t.join();
  state.counters["ranks"] = kRanks;
}
BENCHMARK(BM_ServeScheduleTo64Ranks)
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(zeus::bench::full_or_smoke(2.0, 0.01));

void BM_OnInstructionBegin(benchmark::State& state) {
  const bool changes = state.range(0) != 0;
  Server server(pf::make_point_solution({stage_schedule(changes)}, "bench"), 1);
  zeus::ManualClock clock;
  auto gpu = std::make_shared<zeus::device::SimGpu>(zeus::device::SimGpuModel{}, clock);
  pf::PipelineFrequencyOptimizerOptions o;
  o.server_url = server.url();
  pf::PipelineFrequencyOptimizer opt(gpu, o);
  const auto& schedule = opt.schedule().frequencies;
  std::size_t k = 0;
  for (auto _ : state) {
    opt.on_instruction_begin(schedule[k].instruction);
    if (++k == schedule.size()) {  // a step's end: a check and a rewind, amortized
      opt.on_step_end();
      k = 0;
    }
  }
  opt.controller().flush();
  state.counters["driver_calls"] = static_cast<double>(opt.controller().changes());
}
BENCHMARK(BM_OnInstructionBegin)->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond);

}  // namespace

int main(int argc, char** argv) {
  zeus::log::set_level(zeus::log::Level::kError);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
