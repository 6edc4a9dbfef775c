// `zeus perseus serve`: the pipeline-frequency server (a thin adapter: flags
// and ZEUS_PFO_* -> scheduler, job manager, HTTP server; SIGTERM drains).
#include <signal.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command_registry.h"
#include "http/server.h"
#include "output_checks.h"
#include "util/text.h"
#include "zeus/optimizer/pipeline_frequency/server/http_api.h"
#include "zeus/optimizer/pipeline_frequency/server/job_manager.h"
#include "zeus/optimizer/pipeline_frequency/server/server_settings.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"
#include "zeus/util/log.h"
#include "zeus/util/signals.h"

namespace zeus::cli::perseus_serve_command {
namespace {

namespace pf = zeus::pipeline_frequency;

struct ServeFlags {
  pf::ServerSettings settings;
  CLI::Option* scheduler = nullptr;
  CLI::Option* solution = nullptr;
  CLI::Option* target = nullptr;
  CLI::Option* tolerance = nullptr;
  CLI::Option* log_level = nullptr;
  CLI::Option* dump_dir = nullptr;
  CLI::Option* idle = nullptr;
  bool no_dump = false;
  double idle_seconds = 0.0;
  std::size_t max_jobs = pf::JobManagerOptions{}.max_jobs;
  std::string host = "127.0.0.1";
  int port = 7787;
  std::string unix_socket;
  std::string port_file;
  int threads = 1;
};

void serve(ServeFlags& f) {
  // Environment first (upstream's names), then the flags that were given.
  pf::ServerSettings s = pf::apply_environment(pf::ServerSettings{}, &std::getenv);
  if (f.scheduler->count()) s.scheduler = f.settings.scheduler;
  if (f.solution->count()) s.solution_path = f.settings.solution_path;
  if (f.target->count()) s.target = f.settings.target;
  if (f.tolerance->count()) s.straggler_tolerance = f.settings.straggler_tolerance;
  if (f.log_level->count()) s.log_level = f.settings.log_level;
  if (f.dump_dir->count()) s.dump_dir = f.settings.dump_dir;
  if (f.no_dump) s.dump_data = false;
  if (f.idle->count()) s.max_job_idle_time = zeus::Seconds(f.idle_seconds);
  const std::string level_text = s.log_level == "critical" ? "error" : s.log_level;
  const auto level = zeus::log::parse_level(level_text);
  if (!level) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      fmt::format("log level '{}' is not one of debug, info, warning, error",
                                  zeus::printable(s.log_level)));
  }
  zeus::log::set_level(*level);
  zeus::cli::check_port_file(f.port_file);
  const auto setup = pf::make_scheduler(s);

  // SIGINT/SIGTERM stop the wait below (the project's one signal mechanism).
  std::stop_source stop;
  int received = 0;
  zeus::SignalSubscription on_signal(zeus::SignalSubscription::Kind::kHandle, [&](int sig) {
    received = sig;
    stop.request_stop();
  });
  pf::JobManagerOptions jo;
  jo.dump_data = s.dump_data;
  jo.dump_dir = s.dump_dir;
  jo.max_job_idle_time = s.max_job_idle_time;
  jo.max_jobs = f.max_jobs;
  pf::JobManager manager(setup.factory, jo);
  zeus::http::Router router;
  pf::add_routes(router, manager);
  zeus::http::ServerOptions so;
  so.threads = f.threads;
  if (zeus::log::level() <= zeus::log::Level::kDebug) {
    so.access_log = [](const zeus::http::AccessLogEntry& e) {
      zeus::log::debug("perseus server: {} {} -> {} ({} B in, {} B out, {:.3f} ms, {})",
                       zeus::http::method_name(e.method), zeus::printable(e.target, 200), e.status,
                       e.request_bytes, e.response_bytes, e.duration.count() * 1e3, e.remote);
    };
  }
  zeus::http::Server server(std::move(router), so);
  std::string where;
  if (!f.unix_socket.empty()) {
    server.listen_unix(f.unix_socket, 0660u);
    where = "unix:" + f.unix_socket;
  }
  if (f.port >= 0) {
    const int port = server.listen_tcp(f.host, f.port);
    where += fmt::format("{}http://{}:{}", where.empty() ? "" : " and ", f.host, port);
    if (!f.port_file.empty()) zeus::write_file_atomically(f.port_file, fmt::format("{}\n", port));
  }
  if (where.empty()) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      "nothing to listen on: give --port >= 0 or --unix-socket");
  }
  pf::IdleJobEvictor evictor(manager);
  server.start();
  fmt::print(stderr, "zeus perseus serve: listening on {}\n  serving {}\n  dumps: {}\n", where,
             setup.description, s.dump_data ? zeus::printable(s.dump_dir, 4096) : "off");
  zeus::SteadyClock::instance().wait_until(zeus::Seconds(INFINITY), stop.get_token());
  zeus::log::info("perseus server: {} received; stopping",
                  received == SIGINT ? "SIGINT" : "SIGTERM");
  manager.shutdown();  // waiting ranks get an answer instead of a dropped connection
  server.shutdown();
  fmt::print(stderr, "zeus perseus serve: stopped\n");
}

void setup(CLI::App& root) {
  auto* perseus = root.get_subcommand("perseus");
  auto* cmd = perseus->add_subcommand(
      "serve",
      "Serve per-rank GPU frequency schedules to a pipeline-parallel job (the Python Zeus's "
      "pipeline-frequency server API: its PipelineFrequencyOptimizer works unchanged)");
  auto f = std::make_shared<ServeFlags>();
  f->solution = cmd->add_option(
      "--solution", f->settings.solution_path,
      "What to serve: a lowtime plan file (freqs_pipeline_NNNNN.py, read as data), a 'zeus "
      "perseus plan' JSON file, or a 'zeus perseus solve' directory (with --target). Default: "
      "solution_path of $ZEUS_PFO_SCHEDULER_ARGS");
  f->target = cmd->add_option(
      "--target", f->settings.target,
      "With a solve directory: fastest, min-energy, straggler:<seconds> or straggler:<x>x "
      "(StragglerAware starts there; default min-energy)");
  f->scheduler =
      cmd->add_option("--scheduler", f->settings.scheduler,
                      "PointSolution (one schedule per rank), PointSolution3D (one per stage, "
                      "copied to its data/tensor-parallel ranks), StragglerAware[3D] (switches "
                      "to the slowest plan that meets a straggler's iteration time). Default: "
                      "$ZEUS_PFO_SCHEDULER, else PointSolution")
          ->check(CLI::IsMember(
              {"PointSolution", "PointSolution3D", "StragglerAware", "StragglerAware3D"}));
  f->tolerance = cmd->add_option("--straggler-tolerance", f->settings.straggler_tolerance,
                                 "StragglerAware: measured iteration time this far above the "
                                 "aimed one counts as a straggler (fraction; default 0.03)")
                     ->check(CLI::Range(1e-6, 10.0));
  cmd->add_option("--host", f->host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", f->port, "TCP port (0 = any free port; -1 = no TCP listener)")
      ->check(CLI::Range(-1, 65535))
      ->capture_default_str();
  cmd->add_option("--unix-socket", f->unix_socket, "Also listen on this Unix-domain socket");
  cmd->add_option("--port-file", f->port_file, "Write the bound TCP port to this file");
  cmd->add_option("--threads", f->threads, "HTTP I/O threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  f->dump_dir = cmd->add_option("--dump-dir", f->settings.dump_dir,
                                "Per-job dumps go to DIR/<job id>/ (ranks.json, N.sched.json, "
                                "N.prof.json). Default: $ZEUS_PFO_DUMP_DIR, else ./dump");
  cmd->add_flag("--no-dump", f->no_dump, "Write no dumps (as ZEUS_PFO_DUMP_DATA=false)");
  f->idle = cmd->add_option("--max-job-idle-time", f->idle_seconds,
                            "Forget a job idle this many seconds (checked every 60 s). Default: "
                            "$ZEUS_PFO_MAX_JOB_IDLE_TIME, else 86400 (a day; upstream: a week)")
                ->check(CLI::Range(0.0, 1e10));
  cmd->add_option("--max-jobs", f->max_jobs,
                  "Jobs held at once; a registration beyond answers 503 with Retry-After once "
                  "idle jobs were dropped")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str();
  f->log_level = cmd->add_option("--log-level", f->settings.log_level,
                                 "debug (one line per request), info, warning, error. Default: "
                                 "$ZEUS_PFO_LOG_LEVEL, else info");
  cmd->footer(
      "Endpoints: POST /register_job, POST /register_rank/{job_id}, GET "
      "/schedule/{job_id}?rank=N (answers once every rank has asked), POST /result/{job_id}, "
      "POST /straggler/{job_id} {\"iteration_time\": s|null}.\n"
      "Environment (upstream's): ZEUS_PFO_SCHEDULER, ZEUS_PFO_SCHEDULER_ARGS "
      "('{\"solution_path\": ...}'), ZEUS_PFO_LOG_LEVEL, ZEUS_PFO_DUMP_DATA, ZEUS_PFO_DUMP_DIR, "
      "ZEUS_PFO_MAX_JOB_IDLE_TIME; flags win. SIGTERM or SIGINT: answer waiting ranks, stop, "
      "exit 0. See docs/perseus.md.");
  cmd->callback([f] { serve(*f); });
}

const bool registered = zeus::cli::register_command(51, &setup);

}  // namespace
}  // namespace zeus::cli::perseus_serve_command
