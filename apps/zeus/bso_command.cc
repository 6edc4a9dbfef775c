// `zeus bso serve`: the batch-size optimizer service (a thin adapter: flags and
// environment -> a store, the service, the HTTP server; SIGTERM drains).
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "command_registry.h"
#include "http/server.h"
#include "output_checks.h"
#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/optimizer/batch_size/server/http_api.h"
#include "zeus/optimizer/batch_size/server/service.h"
#include "zeus/optimizer/batch_size/server/store.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"
#include "zeus/util/log.h"

namespace zeus::cli::bso_command {
namespace {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string unix_socket;
  std::string database_url;
  std::string log_level;
  std::string port_file;
  int threads = 1;
  int db_connections = 8;
  std::size_t max_body_bytes = 1 << 20;
  std::int64_t max_jobs = zeus::batch_size::ServiceLimits{}.max_jobs;
  std::vector<std::string> policy_plugins;
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

void serve(const ServeOptions& o) {
  std::string level_text = o.log_level.empty() ? env_or("ZEUS_BSO_LOG_LEVEL", "info") : o.log_level;
  std::transform(level_text.begin(), level_text.end(), level_text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto level = zeus::log::parse_level(level_text == "critical" ? "error" : level_text);
  if (!level) {
    zeus::throw_error(
        zeus::ErrorCode::kInvalidArgument,
        fmt::format("log level '{}' is not one of debug, info, warning, error", level_text));
  }
  zeus::log::set_level(*level);
  // Configurations that cannot work are refused before anything starts.
  if (o.port < 0 && o.unix_socket.empty()) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      "no listener: give --port (0 for any free port) or --unix-socket");
  }
  if (!o.port_file.empty() && o.port < 0) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                      "--port-file needs a TCP listener (--port), but --port is -1");
  }
  zeus::cli::check_port_file(o.port_file);
  for (const auto& plugin : o.policy_plugins) {
    for (const auto& name : zeus::batch_size::load_policy_plugin(plugin)) {
      zeus::log::info("bso: policy '{}' from {} (jobs choose it with \"policy\")", name, plugin);
    }
  }
  const std::string url = o.database_url.empty()
                              ? env_or("ZEUS_BSO_DATABASE_URL", "sqlite:///zeus-bso.db")
                              : o.database_url;

  // Signals go to sigwait() below, not to the server's threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  zeus::batch_size::StoreOptions store_options;
  store_options.connections = o.db_connections;
  auto store = zeus::batch_size::open_store(url, store_options);
  zeus::batch_size::ServiceLimits limits;
  limits.max_jobs = o.max_jobs;
  zeus::batch_size::Service service(*store, limits);
  zeus::http::Router router;
  zeus::batch_size::add_routes(router, service);

  zeus::http::ServerOptions server_options;
  server_options.threads = o.threads;
  server_options.max_body_bytes = o.max_body_bytes;
  if (zeus::log::level() <= zeus::log::Level::kDebug) {
    server_options.access_log = [](const zeus::http::AccessLogEntry& e) {
      zeus::log::debug(
          "bso: request method={} target={} status={} bytes_in={} bytes_out={} "
          "duration_ms={:.3f} remote={}",
          zeus::http::method_name(e.method), e.target, e.status, e.request_bytes, e.response_bytes,
          e.duration.count() * 1e3, e.remote);
    };
  }
  zeus::http::Server server(std::move(router), server_options);
  std::string where;
  if (!o.unix_socket.empty()) {
    server.listen_unix(o.unix_socket, 0660u);
    where = "unix:" + o.unix_socket;
  }
  if (o.port >= 0) {
    const int port = server.listen_tcp(o.host, o.port);
    if (!where.empty()) where += " and ";
    where += fmt::format("http://{}:{}", o.host, port);
    if (!o.port_file.empty()) {
      zeus::write_file_atomically(o.port_file, fmt::format("{}\n", port));
    }
  }
  server.start();
  fmt::print(stderr, "zeus bso serve: listening on {} (database {})\n", where, store->describe());

  int sig = 0;
  sigwait(&signals, &sig);
  zeus::log::info("bso: {} received; finishing in-flight requests",
                  sig == SIGTERM ? "SIGTERM" : "SIGINT");
  server.shutdown();
  store->close();
  fmt::print(stderr, "zeus bso serve: stopped\n");
}

void setup(CLI::App& root) {
  auto* bso = root.add_subcommand("bso", "The batch-size optimizer service (Zeus NSDI '23)");
  bso->require_subcommand(1);
  auto* cmd = bso->add_subcommand(
      "serve", "Serve the batch-size optimizer REST API (the Python Zeus client works unchanged)");
  auto o = std::make_shared<ServeOptions>();
  cmd->add_option("--host", o->host, "Address to listen on (loopback by default)")
      ->capture_default_str();
  cmd->add_option("--port", o->port, "TCP port (0 = any free port; -1 = no TCP listener)")
      ->capture_default_str();
  cmd->add_option("--unix-socket", o->unix_socket, "Also listen on this Unix-domain socket");
  cmd->add_option("--database-url", o->database_url,
                  "sqlite:///relative.db, sqlite:////absolute.db or postgresql://user@host/db "
                  "(default: $ZEUS_BSO_DATABASE_URL, else sqlite:///zeus-bso.db)");
  cmd->add_option("--log-level", o->log_level,
                  "debug (one line per request), info (one per decision), warning, error "
                  "(default: $ZEUS_BSO_LOG_LEVEL, else info)");
  cmd->add_option("--threads", o->threads, "HTTP I/O threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--db-connections", o->db_connections,
                  "PostgreSQL connections (one worker thread each)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--max-jobs", o->max_jobs,
                  "Jobs registered at once; a registration beyond gets 503 with Retry-After")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", o->max_body_bytes, "Larger request bodies get 413")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{64} << 20))
      ->capture_default_str();
  cmd->add_option("--port-file", o->port_file, "Write the bound TCP port to this file");
  cmd->add_option("--policy-plugin", o->policy_plugins,
                  "Shared object registering batch-size policies that a job selects with "
                  "\"policy\": NAME in its spec (docs/extending.md); repeatable");
  cmd->footer(
      "SIGTERM or SIGINT: stop accepting, finish in-flight requests, exit 0.\n"
      "Environment: ZEUS_BSO_DATABASE_URL, ZEUS_BSO_LOG_LEVEL. See docs/bso-service.md.");
  cmd->callback([o] { serve(*o); });
}

const bool registered = zeus::cli::register_command(60, &setup);

}  // namespace
}  // namespace zeus::cli::bso_command
