// `zeus proxy serve`: a reverse proxy in front of an OpenAI-compatible
// inference server that tells each response what energy it cost. It forwards
// /v1/chat/completions, /v1/completions and /v1/models unchanged (streams
// pass through event by event) except that a completion's usage object gains
// "energy" and a non-streamed answer an X-Zeus-Energy-Joules header. Energy
// comes from the GPUs' energy counters, split over requests by the
// Attributor (zeus/proxy/attribution.h); each request leaves a record (JSONL
// log, metrics at /zeus/metrics, the summary at exit).
//
// Threads: handlers run on the HTTP server's I/O threads only to parse the
// body; each forwarded request then runs on its own thread (a blocking
// upstream client), at most max_in_flight at once (more: 503). A client
// that disconnects, or stop(), aborts its upstream exchange, which the
// inference server sees as a cancelled request; the record is still written. A ticker
// thread closes a slice every slice_period; a request's start and end close
// one too, so a response's energy is final when its last byte is known. All
// attribution state is under one mutex.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/http/client.h"
#include "zeus/http/router.h"
#include "zeus/proxy/attribution.h"
#include "zeus/util/clock.h"
#include "zeus/util/files.h"
#include "zeus/util/periodic_thread.h"
#include "zeus/util/units.h"

namespace zeus::proxy {

// The cumulative energy of the measured devices.
class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  virtual Joules read() = 0;  // non-decreasing
  virtual Watts power() = 0;  // now, all devices together
  virtual std::size_t devices() const = 0;
};

// The sum of GPUs' energy counters. kNotSupported for a GPU without one
// (pre-Volta): slices need energy, not sampled power.
class GpuEnergyMeter final : public EnergyMeter {
 public:
  explicit GpuEnergyMeter(std::vector<std::shared_ptr<Gpu>> gpus);
  Joules read() override;
  Watts power() override;
  std::size_t devices() const override { return gpus_.size(); }

 private:
  std::vector<std::shared_ptr<Gpu>> gpus_;
};

struct ProxyOptions {
  std::string upstream;  // "http://host:port" of the inference server
  Seconds slice_period{0.1};
  Seconds upstream_connect_timeout{5.0};
  // Longest wait for an answer (non-streaming) or between two reads (streams).
  Seconds upstream_timeout{600.0};
  std::size_t max_in_flight = 2048;
  std::size_t max_response_bytes = 64 << 20;
  // Ask the server for the final usage chunk of streams whose client did not
  // (and drop it before the client), so every record has token counts.
  bool ask_usage = true;
  std::string record_log;  // JSONL file, appended; "" for none
  // Called with each record (tests; the CLI's verbose mode).
  std::function<void(const struct RequestRecord&)> on_record;
};

// One forwarded completion, as logged.
struct RequestRecord {
  std::string request_id;  // "zp-<n>", also the X-Zeus-Request-Id header
  std::string endpoint;    // "/v1/chat/completions"
  std::string model;
  bool stream = false;
  int status = 0;  // upstream status; 502 when it could not be reached
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> output_tokens;
  std::optional<Seconds> ttft;  // streams: until the first event with a token
  Seconds duration{0.0};
  Joules energy{0.0};
  bool cancelled = false;  // the client left before the end
  double start_unix = 0;   // wall-clock start, seconds since the epoch

  std::optional<double> joules_per_output_token() const;
  nlohmann::ordered_json to_json() const;
};

struct ModelTotals {
  std::uint64_t requests = 0;
  std::uint64_t prompt_tokens = 0;
  std::uint64_t output_tokens = 0;
  Joules energy{0.0};
};

struct ProxySummary {
  std::uint64_t requests = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t failed = 0;  // status other than 2xx
  std::uint64_t output_tokens = 0;
  Joules measured{0.0};  // everything the meter saw since start()
  Joules requests_energy{0.0};
  Joules idle{0.0};
  Seconds elapsed{0.0};
  std::map<std::string, ModelTotals> models;
};
// The `zeus monitor`-style lines printed at exit.
std::string format_summary(const ProxySummary& s);

class Proxy {
 public:
  Proxy(ProxyOptions options, std::unique_ptr<EnergyMeter> meter,
        Clock& clock = SteadyClock::instance());
  ~Proxy();  // stop()
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  // The forwarded routes and GET /zeus/metrics.
  void add_routes(http::Router& router);
  // Takes the meter's first reading and starts the slice ticker.
  void start();
  // Cancels the upstream exchanges in flight, waits for their records, closes
  // the last slice. Idempotent.
  void stop();

  ProxySummary summary() const;
  std::string metrics();  // Prometheus text exposition
  std::size_t in_flight() const { return in_flight_.load(); }

 private:
  struct Exchange;
  void forward_plain(const http::Request& request, const http::Responder& responder);
  void run_completion(std::shared_ptr<Exchange> x);
  void run_exchange(Exchange& x);
  bool spawn(std::function<void()> work);  // false when at max_in_flight

  // Attribution, under mutex_.
  void begin(RequestId id, bool observed);
  void add_tokens(RequestId id, double tokens);
  Joules finish(RequestId id);
  void close_slice_locked();
  void record(RequestRecord r);

  std::unique_ptr<http::Client> take_client();
  void give_back(std::unique_ptr<http::Client> client);

  const ProxyOptions options_;
  std::unique_ptr<EnergyMeter> meter_;
  Clock& clock_;
  std::stop_source stop_;
  PeriodicThread ticker_;
  std::atomic<std::uint64_t> next_id_{1};
  std::atomic<std::size_t> in_flight_{0};
  std::mutex workers_mutex_;
  std::condition_variable workers_done_;

  mutable std::mutex mutex_;  // guards the attribution and the totals
  Attributor attributor_;
  Joules last_reading_{0.0};
  bool started_ = false;
  bool stopped_ = false;
  Seconds started_at_{0.0};
  ProxySummary totals_;

  std::mutex log_mutex_;
  std::unique_ptr<AppendFile> log_;

  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<http::Client>> pool_;
};

}  // namespace zeus::proxy
