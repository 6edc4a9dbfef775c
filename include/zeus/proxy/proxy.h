// `zeus proxy serve`: a reverse proxy in front of an OpenAI-compatible
// inference server that tells each response what energy it cost. It forwards
// /v1/chat/completions, /v1/completions and /v1/models unchanged (streams
// pass through event by event) except that a completion's usage object gains
// "energy" and a non-streamed answer an X-Zeus-Energy-Joules header. Energy
// comes from the GPUs' energy counters, split over requests by the
// Attributor (zeus/proxy/attribution.h); each request leaves a record (JSONL
// log, metrics at /zeus/metrics, the summary at exit).
//
// Threads: none of its own per request. Handlers run on the HTTP server's
// I/O threads, and each forwarded request's upstream exchange runs there
// too (http::AsyncClient on the client connection's executor), so a piece of
// a stream read from the inference server is inspected and written to the
// client on the thread that read it; reading upstream pauses while the
// client is behind (back-pressure). At most max_in_flight requests at once
// (more: 503). A client that disconnects, or stop(), aborts its upstream
// exchange, which the inference server sees as a cancelled request; the
// record is still written. So does a streaming client that reads nothing for
// the HTTP server's event_write_timeout (the server drops it). A server that
// sends an event or a stream over max_event_bytes / max_stream_bytes is cut
// off (502). A ticker thread closes a slice every
// slice_period; a request's start and end close one too, so a response's
// energy is final when its last byte is known. All attribution state is
// under one mutex. Call stop() before the HTTP server shuts down.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "http/async_client.h"
#include "http/router.h"
#include "zeus/proxy/attribution.h"
#include "zeus/proxy/energy_meter.h"
#include "zeus/proxy/record.h"
#include "zeus/util/clock.h"
#include "zeus/util/files.h"
#include "zeus/util/periodic_thread.h"
#include "zeus/util/units.h"

namespace zeus::proxy {

struct ProxyOptions {
  std::string upstream;  // "http://host:port" of the inference server
  Seconds slice_period{0.1};
  Seconds upstream_connect_timeout{5.0};
  // Longest wait for an answer (non-streaming) or between two reads (streams).
  Seconds upstream_timeout{600.0};
  std::size_t max_in_flight = 2048;
  std::size_t max_response_bytes = 64 << 20;  // a non-streamed answer, read whole
  // A streamed answer: one event (the proxy holds an unfinished one until its
  // blank line) and the whole stream. A server past either is cut off: the
  // client's stream ends, the record says 502.
  std::size_t max_event_bytes = 4 << 20;
  std::size_t max_stream_bytes = std::size_t{1} << 30;
  // Ask the server for the final usage chunk of streams whose client did not
  // (and drop it before the client), so every record has token counts.
  bool ask_usage = true;
  std::string record_log;  // JSONL file, appended; "" for none
  // Called with each record (tests; the CLI's verbose mode).
  std::function<void(const RequestRecord&)> on_record;
};

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
  struct Upstream;
  struct Exchange;
  void forward_plain(http::Request request, http::Responder responder);
  void start_completion(std::shared_ptr<Exchange> x);
  void start_attempt(const std::shared_ptr<Exchange>& x);
  bool on_upstream_head(Exchange& x, const http::ResponseHead& head);
  bool on_upstream_body(Exchange& x, std::string_view bytes);
  bool cut_off(Exchange& x, std::string what);
  void on_upstream_done(const std::shared_ptr<Exchange>& x, const http::AsyncOutcome& outcome);
  void report_tokens(Exchange& x);
  bool enter();  // false when at max_in_flight or stopping
  void leave();

  // Attribution, under mutex_.
  void begin(RequestId id, bool observed);
  void add_tokens(RequestId id, double tokens);
  Joules finish(RequestId id);
  void close_slice_locked();
  void record(RequestRecord r);

  const ProxyOptions options_;
  std::unique_ptr<EnergyMeter> meter_;
  Clock& clock_;
  std::unique_ptr<http::AsyncClient> upstream_;  // pools keep-alive connections
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
};

}  // namespace zeus::proxy
