// `zeus proxy serve` (the energy-attributing reverse proxy) and `zeus proxy
// bench` (its closed-loop load driver): flags in, the proxy library out.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "command_registry.h"
#include "http/server.h"
#include "output_checks.h"
#include "sampling_flags.h"
#include "util/text.h"
#include "zeus/device/devices.h"
#include "zeus/proxy/load_driver.h"
#include "zeus/proxy/proxy.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"
#include "zeus/util/log.h"
#include "zeus/util/signals.h"

namespace zeus::cli::proxy_command {
namespace {

struct ServeFlags {
  std::string upstream;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string port_file;
  std::string gpus;
  double slice_period = 0.1;
  double upstream_timeout = 600;
  double request_timeout = 30;
  double client_timeout = 60;
  std::size_t max_in_flight = 2048;
  std::size_t max_body_bytes = 16 << 20;
  std::size_t max_event_bytes = 4 << 20;
  std::size_t max_stream_bytes = std::size_t{1} << 30;
  int threads = 2;
  std::string log;
  bool no_ask_usage = false;
};

void serve(const ServeFlags& f) {
  zeus::cli::check_port_file(f.port_file);
  if (!f.log.empty()) zeus::check_output_path(f.log);
  const auto devices = zeus::device::discover_devices();
  const auto selection = zeus::device::select_devices(
      devices, zeus::cli::parse_device_indices(f.gpus, "--gpus"), std::vector<int>{});
  if (selection.gpus.empty()) {
    std::string why = "no GPU to measure";
    for (const auto& note : devices.notes) why += "; " + note;
    zeus::throw_error(zeus::ErrorCode::kNotFound,
                      why +
                          " (zeus show-env lists what was found; ZEUS_GPU_BACKEND=sim "
                          "simulates one)");
  }
  zeus::proxy::ProxyOptions o;
  o.upstream = f.upstream;
  o.slice_period = zeus::Seconds(f.slice_period);
  o.upstream_timeout = zeus::Seconds(f.upstream_timeout);
  o.max_in_flight = f.max_in_flight;
  o.max_event_bytes = f.max_event_bytes;
  o.max_stream_bytes = f.max_stream_bytes;
  o.ask_usage = !f.no_ask_usage;
  o.record_log = f.log;
  zeus::proxy::Proxy proxy(o, std::make_unique<zeus::proxy::GpuEnergyMeter>(selection.gpus));

  std::stop_source stop;
  zeus::SignalSubscription on_signal(zeus::SignalSubscription::Kind::kHandle,
                                     [&](int) { stop.request_stop(); });
  zeus::http::Router router;
  proxy.add_routes(router);
  zeus::http::ServerOptions so;
  so.threads = f.threads;
  so.max_body_bytes = f.max_body_bytes;
  // Reading a request is bounded on its own: a client that trickles its body
  // holds a connection only that long. Writing a whole answer (up to 64 MiB,
  // to a client as slow as it likes) keeps the old, longer bound; a stream's
  // client that reads nothing for --client-timeout is dropped, which cancels
  // its request upstream and frees its in-flight slot.
  so.request_timeout = zeus::Seconds(f.request_timeout);
  so.response_timeout = zeus::Seconds(f.upstream_timeout + 10);
  so.event_write_timeout = zeus::Seconds(f.client_timeout);
  so.max_connections = f.max_in_flight + 64;
  zeus::http::Server server(std::move(router), so);
  const int port = server.listen_tcp(f.host, f.port);
  if (!f.port_file.empty()) zeus::write_file_atomically(f.port_file, fmt::format("{}\n", port));
  proxy.start();
  server.start();
  fmt::print(stderr, "zeus proxy: http://{}:{} -> {} measuring {} GPU(s) ({}), slices of {} s{}\n",
             f.host, port, zeus::printable(f.upstream, 200), selection.gpus.size(),
             devices.gpu_backend, f.slice_period,
             f.log.empty() ? "" : fmt::format(", records in {}", zeus::printable(f.log, 4096)));
  zeus::SteadyClock::instance().wait_until(zeus::Seconds(INFINITY), stop.get_token());
  proxy.stop();  // aborts streams in flight (their records are written)
  server.shutdown();
  fmt::print(stderr, "{}", zeus::proxy::format_summary(proxy.summary()));
}

struct BenchFlags {
  std::string url = "http://127.0.0.1:8080";
  std::string prompts;
  std::string model;
  std::string endpoint = "/v1/chat/completions";
  int concurrency = 1;
  std::size_t requests = 0;
  int max_tokens = 128;
  bool no_stream = false;
};

void bench(const BenchFlags& f) {
  zeus::proxy::LoadOptions o;
  o.url = f.url;
  o.prompts = zeus::proxy::read_prompts(f.prompts);
  o.model = f.model;
  o.endpoint = f.endpoint;
  o.concurrency = f.concurrency;
  o.requests = f.requests;
  o.max_tokens = f.max_tokens;
  o.stream = !f.no_stream;
  const auto result = zeus::proxy::run_load(o);
  fmt::print("{}", zeus::proxy::format_load_result(result));
  zeus::cli::flush_stdout();
  if (result.requests == 0) {
    zeus::throw_error(zeus::ErrorCode::kIo, "no request succeeded: " + result.first_error);
  }
}

void setup(CLI::App& root) {
  auto* proxy = root.add_subcommand(
      "proxy", "Energy per response for an OpenAI-compatible inference server (docs/proxy.md)");
  proxy->require_subcommand(1);

  auto* serve_cmd = proxy->add_subcommand(
      "serve",
      "Forward /v1/chat/completions, /v1/completions and /v1/models to the server, adding each "
      "completion's GPU energy to its usage (usage.energy) and an X-Zeus-Energy-Joules header");
  auto sf = std::make_shared<ServeFlags>();
  serve_cmd->add_option("--upstream", sf->upstream, "The inference server: http://HOST:PORT")
      ->required();
  serve_cmd->add_option("--host", sf->host, "Address to listen on")->capture_default_str();
  serve_cmd->add_option("--port", sf->port, "TCP port (0 = any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  serve_cmd->add_option("--port-file", sf->port_file, "Write the bound port to this file");
  serve_cmd->add_option("--gpus", sf->gpus,
                        "GPUs the server uses, e.g. 0,1 or 0-3 (default: every GPU)");
  serve_cmd
      ->add_option("--slice-period", sf->slice_period,
                   "Seconds between energy readings when no request starts or ends")
      ->check(CLI::Range(0.005, 60.0))
      ->capture_default_str();
  serve_cmd
      ->add_option("--upstream-timeout", sf->upstream_timeout,
                   "Seconds to wait for an answer, or between two chunks of a stream")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  serve_cmd
      ->add_option("--request-timeout", sf->request_timeout,
                   "Seconds a client has to send its whole request once it started (else 408)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  serve_cmd
      ->add_option("--client-timeout", sf->client_timeout,
                   "Seconds a streaming client may read nothing before it is dropped and its "
                   "request cancelled upstream")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-event-bytes", sf->max_event_bytes,
                   "Largest event of a streamed answer; a server past it is cut off (502)")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-stream-bytes", sf->max_stream_bytes,
                   "Largest streamed answer; a server past it is cut off (502)")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 40))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-in-flight", sf->max_in_flight,
                   "Completions forwarded at once; more are answered 503")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-body-bytes", sf->max_body_bytes, "Largest request body accepted (413)")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
      ->capture_default_str();
  serve_cmd
      ->add_option("--threads", sf->threads,
                   "HTTP I/O threads (they also run the upstream exchanges)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  serve_cmd->add_option("--log", sf->log, "Append one JSON record per completion to this file");
  serve_cmd->add_flag("--no-ask-usage", sf->no_ask_usage,
                      "Forward streams as sent: without stream_options.include_usage the record "
                      "has no prompt token count");
  serve_cmd->footer(
      "Metrics (Prometheus text): GET /zeus/metrics. SIGINT/SIGTERM: cancel the streams in "
      "flight, write their records, print the summary, exit 0. Unprivileged? Set "
      "ZEUSD_SOCK_PATH to read the GPUs through zeusd. See docs/proxy.md.");
  serve_cmd->callback([sf] { serve(*sf); });

  auto* bench_cmd = proxy->add_subcommand(
      "bench",
      "Closed-loop load through the proxy; prints the ML.ENERGY Leaderboard's numbers: J per "
      "response, J per output token, output tokens/s, latency");
  auto bf = std::make_shared<BenchFlags>();
  bench_cmd->add_option("--url", bf->url, "The proxy")->capture_default_str();
  bench_cmd
      ->add_option("--prompts", bf->prompts,
                   "Prompt file: one per line (text, or JSON string/object with \"prompt\")")
      ->required();
  bench_cmd->add_option("--model", bf->model, "The model field of each request");
  bench_cmd->add_option("--endpoint", bf->endpoint, "Where to send them")
      ->check(CLI::IsMember({"/v1/chat/completions", "/v1/completions"}))
      ->capture_default_str();
  bench_cmd->add_option("--concurrency", bf->concurrency, "Clients sending at once")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  bench_cmd->add_option("--requests", bf->requests, "Requests in all (default: one per prompt)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000000}));
  bench_cmd->add_option("--max-tokens", bf->max_tokens, "max_tokens of each request")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  bench_cmd->add_flag("--no-stream", bf->no_stream, "Ask for whole answers instead of streams");
  bench_cmd->callback([bf] { bench(*bf); });
}

const bool registered = zeus::cli::register_command(70, &setup);

}  // namespace
}  // namespace zeus::cli::proxy_command
