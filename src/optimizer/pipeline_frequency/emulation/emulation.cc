#include "zeus/optimizer/pipeline_frequency/emulation/emulation.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <thread>

#include "http/server.h"
#include "optimizer/pipeline_frequency/emulation/line_channel.h"
#include "optimizer/pipeline_frequency/planner/plans_json.h"
#include "util/text.h"
#include "zeus/optimizer/pipeline_frequency/server/http_api.h"
#include "zeus/optimizer/pipeline_frequency/server/job_manager.h"
#include "zeus/optimizer/pipeline_frequency/server/plan_sources.h"
#include "zeus/optimizer/pipeline_frequency/server/point_solution.h"
#include "zeus/optimizer/pipeline_frequency/server/straggler_scheduler.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

extern char** environ;

namespace zeus::pipeline_frequency {

namespace {

using nlohmann::json;
using pipeline_frequency_internal::LineChannel;

// What one run of the pipeline serves and how its iterations end.
struct ScenarioSpec {
  std::string name;
  std::shared_ptr<const SchedulerFactory> factory;
  int iterations = 1;
  int report_every = 0;
  std::optional<Seconds> straggler;  // every iteration lasts at least this long
};

// What the driver saw of one run: per iteration, the pipeline's time and
// energy (summed over stages).
struct RunResult {
  std::vector<Seconds> times;
  std::vector<Joules> energies;
  bool followed_schedule = true;
  bool clocks_restored = true;
};

// Closes the file descriptors it holds.
struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  int add(int fd) {
    fds.push_back(fd);
    return fd;
  }
  void close(int fd) {
    for (int& f : fds) {
      if (f == fd) {
        ::close(f);
        f = -1;
      }
    }
  }
};

// Runs a stage's worker and returns a function that waits for it and
// returns its exit status.
using Waiter = std::function<int()>;

Waiter start_thread(const StageChannels& ch) {
  auto status = std::make_shared<int>(1);
  auto thread = std::make_shared<std::thread>([ch, status] { *status = run_stage_worker(ch); });
  return [thread, status] {
    thread->join();
    return *status;
  };
}

Waiter start_process(const std::vector<std::string>& command, const StageChannels& ch) {
  std::vector<std::string> args = command;
  args.insert(args.end(), {"--control-fd", "3", "--previous-fd", ch.previous >= 0 ? "4" : "-1",
                           "--next-fd", ch.next >= 0 ? "5" : "-1"});
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Through high numbers first, so no target clobbers a source.
  const int sources[] = {ch.control, ch.previous, ch.next};
  for (int i = 0; i < 3; ++i) {
    if (sources[i] >= 0) posix_spawn_file_actions_adddup2(&actions, sources[i], 1000 + i);
  }
  for (int i = 0; i < 3; ++i) {
    if (sources[i] >= 0) posix_spawn_file_actions_adddup2(&actions, 1000 + i, 3 + i);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw_error(ErrorCode::kIo, fmt::format("cannot start the stage process {}: {}",
                                            printable(args[0]), errno_text(rc)));
  }
  return [pid] {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  };
}

[[noreturn]] void stage_failed(int stage, const std::string& what) {
  throw_error(ErrorCode::kInternal, fmt::format("emulated stage {} failed: {}", stage, what));
}

json expect(LineChannel& channel, int stage, const char* type) {
  json m = channel.receive();
  if (m.value("type", "") == "error") stage_failed(stage, m.value("message", "?"));
  if (m.value("type", "") != type) {
    stage_failed(stage, fmt::format("expected a '{}' message, got {}", type, m.dump()));
  }
  return m;
}

// Sockets: driver <-> each stage, and stage s <-> s + 1. Fills each stage's
// ends in `worker` and returns the driver's ends, all held by `fds`.
std::vector<int> connect_stages(int stages, Fds& fds, std::vector<StageChannels>& worker) {
  std::vector<int> driver_end(static_cast<std::size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    int pair[2];
    pipeline_frequency_internal::socket_pair(pair);
    driver_end[static_cast<std::size_t>(s)] = fds.add(pair[0]);
    worker[static_cast<std::size_t>(s)].control = fds.add(pair[1]);
  }
  for (int s = 0; s + 1 < stages; ++s) {
    int pair[2];
    pipeline_frequency_internal::socket_pair(pair);
    worker[static_cast<std::size_t>(s)].next = fds.add(pair[0]);
    worker[static_cast<std::size_t>(s) + 1].previous = fds.add(pair[1]);
  }
  return driver_end;
}

// Starts each stage's worker (a thread, or a process running
// o.worker_command), adding its waiter to `waits` as soon as it runs.
void start_stage_workers(const EmulationOptions& o, const std::vector<StageChannels>& worker,
                         Fds& fds, std::vector<Waiter>& waits) {
  for (const auto& ch : worker) {
    waits.push_back(o.worker_command.empty() ? start_thread(ch)
                                             : start_process(o.worker_command, ch));
  }
  if (!o.worker_command.empty()) {
    // The processes hold their own copies; a process that dies must leave
    // its sockets with no other open end, so its peers see it end.
    for (const auto& ch : worker) {
      for (int fd : {ch.control, ch.previous, ch.next}) {
        if (fd >= 0) fds.close(fd);
      }
    }
  }
}

// Sends every stage its configuration and hands on the job id that rank 0
// registered with the server at `port`.
void configure_stages(const EmulationOptions& o, const ScenarioSpec& spec, int port,
                      std::vector<LineChannel>& control) {
  const int stages = static_cast<int>(control.size());
  for (int s = 0; s < stages; ++s) {
    control[static_cast<std::size_t>(s)].send(
        {{"type", "config"},
         {"stage", s},
         {"num_stages", stages},
         {"microbatches", o.microbatches},
         {"iterations", spec.iterations},
         {"profile", o.profile},
         {"p_blocking_w", o.p_blocking.value()},
         {"server_url", fmt::format("http://127.0.0.1:{}", port)},
         {"report_every", spec.report_every},
         {"timeout_s", o.timeout.count()},
         {"job_metadata", "emulation"}});
  }
  // The job id: rank 0 registered the job; the driver is the collective.
  const json id = expect(control[0], 0, "job_id");
  for (int s = 1; s < stages; ++s) control[static_cast<std::size_t>(s)].send(id);
}

// Drives spec.iterations iterations, recording each one's time and energy,
// then collects every stage's end.
void drive_iterations(const ScenarioSpec& spec, std::vector<LineChannel>& control,
                      RunResult& result) {
  const int stages = static_cast<int>(control.size());
  Seconds start(0.0);
  for (int k = 0; k < spec.iterations; ++k) {
    Seconds end = start;
    for (int s = 0; s < stages; ++s) {
      const json m = expect(control[static_cast<std::size_t>(s)], s, "finished");
      end = std::max(end, Seconds(m.at("time").get<double>()));
    }
    // The optimizer step: every stage waits for the pipeline's last
    // computation, and for a straggler elsewhere.
    if (spec.straggler) end = std::max(end, start + *spec.straggler);
    for (auto& c : control) c.send({{"type", "barrier"}, {"time", end.count()}});
    Joules energy(0.0);
    for (int s = 0; s < stages; ++s) {
      const json m = expect(control[static_cast<std::size_t>(s)], s, "measured");
      energy += Joules(m.at("energy_j").get<double>());
      if (m.at("scheduled") != m.at("ran")) result.followed_schedule = false;
    }
    result.times.push_back(end - start);
    result.energies.push_back(energy);
    start = end;
  }
  for (int s = 0; s < stages; ++s) {
    const json m = expect(control[static_cast<std::size_t>(s)], s, "done");
    if (!m.value("clocks_restored", false)) result.clocks_restored = false;
  }
}

// Waits for every stage's worker; returns how many exited with an error.
int wait_for_stages(bool failed_run, const Fds& fds, std::vector<Waiter>& waits) {
  // After a failure every socket is shut down, so every stage still waiting
  // for a message ends at once.
  if (failed_run) {
    for (int fd : fds.fds) {
      if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    }
  }
  int failed = 0;
  for (auto& wait : waits) failed += wait() != 0 ? 1 : 0;
  return failed;
}

RunResult run_scenario(const EmulationOptions& o, int stages, const ScenarioSpec& spec,
                       const std::string& dump_dir) {
  JobManagerOptions jo;
  jo.dump_dir = dump_dir;
  JobManager manager(spec.factory, jo);
  http::Router router;
  add_routes(router, manager);
  http::ServerOptions so;
  so.threads = 2;
  http::Server server(std::move(router), so);
  const int port = server.listen_tcp("127.0.0.1", 0);
  server.start();

  Fds fds;
  std::vector<StageChannels> worker(static_cast<std::size_t>(stages));
  const std::vector<int> driver_end = connect_stages(stages, fds, worker);
  std::vector<Waiter> waits;
  std::vector<LineChannel> control;
  for (int s = 0; s < stages; ++s) {
    control.emplace_back(driver_end[static_cast<std::size_t>(s)], fmt::format("stage {}", s),
                         o.timeout);
  }
  RunResult result;
  std::optional<Error> failure;
  try {
    start_stage_workers(o, worker, fds, waits);
    configure_stages(o, spec, port, control);
    drive_iterations(spec, control, result);
  } catch (const Error& e) {
    failure = e;
  }
  const int failed = wait_for_stages(failure.has_value(), fds, waits);
  manager.shutdown();
  server.shutdown();
  if (failure) throw *failure;
  if (failed > 0) {
    throw_error(ErrorCode::kInternal,
                fmt::format("{} emulated stage(s) exited with an error", failed));
  }
  return result;
}

StagePlan all_max_plan(const pipeline_frequency::StageProfile& profile, int stages,
                       int microbatches) {
  StagePlan plan;
  for (int s = 0; s < stages; ++s) {
    auto& entries = plan.emplace_back();
    for (const auto& [instruction, mb] :
         pipeline_frequency::one_f_one_b_order(s, stages, microbatches)) {
      Megahertz f(0);
      for (const auto& e : profile.entries_for(s, instruction)) f = std::max(f, e.frequency);
      entries.push_back(
          ScheduleEntry{std::string(pipeline_frequency::instruction_name(instruction)), f});
    }
  }
  return plan;
}

void check(const EmulationOptions& o) {
  const auto bad = [](const std::string& what) { throw_error(ErrorCode::kInvalidArgument, what); };
  if (o.profile.empty()) bad("a stage profile is required");
  if (o.work_dir.empty()) bad("a work directory is required");
  if (o.iterations < 1 || o.iterations > 1000) bad("iterations must be between 1 and 1000");
  if (o.microbatches < 1 || o.microbatches > 100'000) {
    bad("microbatches must be between 1 and 100000");
  }
  if (!(o.straggler_slowdown == 0.0 ||
        (o.straggler_slowdown >= 1.0 && o.straggler_slowdown <= 10.0))) {
    bad(fmt::format("the straggler slowdown must be 0 (none) or in [1, 10], got {:g}",
                    o.straggler_slowdown));
  }
}

// Runs one scenario, the server's dumps in <work dir>/dumps/<the index its
// first row will have in the report>.
RunResult run_next_scenario(const EmulationOptions& o, int stages, const ScenarioSpec& spec,
                            const EmulationReport& report) {
  const std::string dumps = fmt::format("{}/dumps/{}", o.work_dir, report.scenarios.size());
  log::info("perseus emulate: running '{}'", spec.name);
  return run_scenario(o, stages, spec, dumps);
}

// A report row from iterations [first, first + count) of a run.
ScenarioResult scenario_result(const std::string& name, bool straggler, Seconds planned,
                               Joules predicted, const RunResult& r, std::size_t first,
                               std::size_t count) {
  ScenarioResult s;
  s.name = name;
  s.straggler = straggler;
  s.planned_time = planned;
  s.predicted_energy = predicted;
  s.iteration_times.assign(r.times.begin() + static_cast<std::ptrdiff_t>(first),
                           r.times.begin() + static_cast<std::ptrdiff_t>(first + count));
  s.iteration_energies.assign(r.energies.begin() + static_cast<std::ptrdiff_t>(first),
                              r.energies.begin() + static_cast<std::ptrdiff_t>(first + count));
  s.measured_time = s.iteration_times.back();
  s.measured_energy = s.iteration_energies.back();
  s.followed_schedule = r.followed_schedule;
  s.clocks_restored = r.clocks_restored;
  return s;
}

// Runs a scenario and adds its row, over all its iterations, to the report.
void add_scenario(const EmulationOptions& o, int stages, const ScenarioSpec& spec, Seconds planned,
                  Joules predicted, EmulationReport& report) {
  const RunResult r = run_next_scenario(o, stages, spec, report);
  report.scenarios.push_back(scenario_result(spec.name, spec.straggler.has_value(), planned,
                                             predicted, r, 0, r.times.size()));
}

// With a straggler that makes every iteration last T' = T_min x the
// slowdown: all max frequency, T* waiting for it, and StragglerAware.
void add_straggler_scenarios(
    const EmulationOptions& o, int stages, const std::vector<pipeline_frequency::PlanPoint>& pts,
    std::size_t star, const pipeline_frequency::PlanPoint& all_max,
    const std::shared_ptr<const SchedulerFactory>& all_max_factory,
    const std::shared_ptr<const pipeline_frequency::StoredSolution>& frontier,
    EmulationReport& report) {
  const Seconds t_prime = report.t_min * o.straggler_slowdown;
  report.t_prime = t_prime;
  const Watts pb = o.p_blocking;
  const auto waiting = [&](Seconds t, Joules e) {
    return e + static_cast<double>(stages) * pb * std::max(Seconds(0.0), t_prime - t);
  };
  add_scenario(o, stages,
               {"all max frequency, straggler", all_max_factory, o.iterations, 0, t_prime}, t_prime,
               waiting(all_max.time, all_max.energy), report);
  // One run: the first iteration at T* shows the wait; the server sees it in
  // the results and hands out the slowest plan that meets T' from then on.
  StragglerOptions so;
  so.initial_target = "min-energy";
  so.tolerance = o.straggler_tolerance;
  const std::shared_ptr<const SchedulerFactory> reactive(
      make_straggler_aware(frontier, "plans.json", so));
  const ScenarioSpec spec{"StragglerAware", reactive, 1 + o.iterations, 1, t_prime};
  const std::size_t switched = pipeline_frequency::select_straggler(pts, t_prime);
  const RunResult r = run_next_scenario(o, stages, spec, report);
  const auto row = [&](const std::string& name, std::size_t first, std::size_t count,
                       std::size_t i) {
    report.scenarios.push_back(scenario_result(
        name, true, t_prime, pipeline_frequency::energy_with_wait(pts[i], t_prime, stages, pb), r,
        first, count));
  };
  row("T*, waiting for the straggler", 0, 1, star);
  row(fmt::format("StragglerAware: slowest plan within T' ({:.4g} s)", pts[switched].time.count()),
      1, static_cast<std::size_t>(o.iterations), switched);
}

}  // namespace

std::size_t EmulationReport::baseline(std::size_t i) const {
  const bool straggler = scenarios.at(i).straggler;
  for (std::size_t k = 0; k < scenarios.size(); ++k) {
    if (scenarios[k].straggler == straggler) return k;  // the first of its kind is all-max
  }
  return i;
}

double EmulationReport::measured_saving(std::size_t i) const {
  const auto& b = scenarios.at(baseline(i));
  return 1.0 - scenarios.at(i).measured_energy / b.measured_energy;
}

double EmulationReport::predicted_saving(std::size_t i) const {
  const auto& b = scenarios.at(baseline(i));
  return 1.0 - scenarios.at(i).predicted_energy / b.predicted_energy;
}

EmulationReport run_emulation(const EmulationOptions& o) {
  check(o);
  const auto profile = pipeline_frequency::StageProfile::read_file(o.profile);
  pipeline_frequency::PlannerOptions po;
  po.microbatches = o.microbatches;
  po.unit_time = o.unit_time;
  po.p_blocking = o.p_blocking;
  po.cost_model = o.cost_model;
  const auto solution = pipeline_frequency::solve_pipeline(profile, po);
  const int stages = solution.dag().num_stages;

  EmulationReport report;
  report.num_stages = stages;
  report.microbatches = o.microbatches;
  report.solution_dir = o.work_dir + "/solution";
  pipeline_frequency::write_solution(solution, report.solution_dir);
  auto frontier = std::make_shared<const pipeline_frequency::StoredSolution>(
      pipeline_frequency::read_solution(report.solution_dir));
  const auto& pts = solution.points();
  const std::size_t fastest = pipeline_frequency::select_fastest(pts);
  const std::size_t star = pipeline_frequency::select_min_energy(pts);
  const auto all_max = solution.all_max_frequency_point();
  report.t_min = pts[fastest].time;
  report.t_star = pts[star].time;
  const auto all_max_factory = std::shared_ptr<const SchedulerFactory>(
      make_point_solution(all_max_plan(profile, stages, o.microbatches), "all max frequency"));
  const auto point = [&](std::size_t i, const std::string& name) {
    return std::shared_ptr<const SchedulerFactory>(
        make_point_solution(stage_plan(*frontier, i), name));
  };

  add_scenario(o, stages, {"all max frequency", all_max_factory, o.iterations, 0, std::nullopt},
               all_max.time, all_max.energy, report);
  add_scenario(o, stages,
               {"fastest plan (T_min)", point(fastest, "fastest"), o.iterations, 0, std::nullopt},
               pts[fastest].time, pts[fastest].energy, report);
  add_scenario(o, stages,
               {"minimum energy (T*)", point(star, "min-energy"), o.iterations, 0, std::nullopt},
               pts[star].time, pts[star].energy, report);

  if (o.straggler_slowdown > 0.0) {
    add_straggler_scenarios(o, stages, pts, star, all_max, all_max_factory, frontier, report);
  }
  return report;
}

}  // namespace zeus::pipeline_frequency
