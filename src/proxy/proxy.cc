#include "zeus/proxy/proxy.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <optional>

#include "util/text.h"
#include "zeus/proxy/openai.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::proxy {

namespace {

http::Headers end_to_end(const http::Headers& in, bool for_event_stream = false) {
  http::Headers out;
  for (const auto& [k, v] : in.fields()) {
    if (http::is_per_hop_field(k)) continue;
    // The event-stream answer sets these itself.
    if (for_event_stream && (iequals(k, "content-type") || iequals(k, "cache-control"))) continue;
    out.add(k, v);
  }
  return out;
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

}  // namespace

// ---------------------------------------------------------------------------
// Proxy

namespace {

// Back-pressure: reading upstream pauses while this much is queued for the
// client (well under the server's max_event_backlog, which drops a client).
constexpr std::size_t kClientBacklogBytes = 64 << 10;

}  // namespace

// The upstream side of one forwarded request, which stop() and a client that
// leaves cancel from other threads. Everything else of an exchange lives on
// its connection's executor.
struct Proxy::Upstream {
  std::mutex mutex;  // guards call and cancelled
  // Weak: the exchange keeps itself alive while it runs, and dies with its
  // I/O context (telling on_done), so a cancel never reaches a dead context.
  std::weak_ptr<http::AsyncCall> call;
  bool cancelled = false;
  std::optional<std::stop_callback<std::function<void()>>> on_proxy_stop;

  void cancel() {
    std::lock_guard lock(mutex);
    cancelled = true;
    if (auto c = call.lock()) c->cancel();
  }
  bool was_cancelled() {
    std::lock_guard lock(mutex);
    return cancelled;
  }
  void resume() {
    std::lock_guard lock(mutex);
    if (auto c = call.lock()) c->resume();
  }
  void pause() {
    std::lock_guard lock(mutex);
    if (auto c = call.lock()) c->pause();
  }
  // A callback that cancels, without keeping this alive.
  static std::function<void()> canceller(const std::shared_ptr<Upstream>& u) {
    return [w = std::weak_ptr<Upstream>(u)] {
      if (auto up = w.lock()) up->cancel();
    };
  }
};

// One completion. All but `upstream` is touched only on the executor of the
// client's connection (the handler, then the AsyncCall's callbacks).
struct Proxy::Exchange {
  http::Request request;
  http::Responder responder{nullptr};
  http::Executor executor;
  CompletionRequest completion;
  RequestId id = 0;
  RequestRecord record;
  Seconds start{0.0};
  bool ended = false;  // the attribution of `id` is closed
  std::shared_ptr<Upstream> upstream = std::make_shared<Upstream>();
  int attempt = 0;
  http::EventStream events;
  bool streaming = false;
  std::string buffered;
  bool too_large = false;        // cut off: over one of the size bounds
  std::string too_large_what;    // which, for the message
  std::size_t stream_bytes = 0;  // read from the server's event stream
  int status = 0;
  http::Headers head_fields;
  EventSplitter splitter;
  std::int64_t tokens = 0;    // seen in the stream
  std::int64_t reported = 0;  // of them, given to the attributor
  // The usage chunk the proxy asked for (not the client) is not passed on.
  bool drop_usage = false;
  // A server that rejects the stream_options the proxy added gets the
  // client's own body once more.
  bool retry_as_sent = false;
  bool saw_done = false;  // the answer is complete even if the client leaves now
  std::string out;        // what one upstream read passes on
};

Proxy::Proxy(ProxyOptions options, std::unique_ptr<EnergyMeter> meter, Clock& clock)
    : options_(std::move(options)), meter_(std::move(meter)), clock_(clock) {
  if (options_.slice_period.count() <= 0 || !std::isfinite(options_.slice_period.count())) {
    throw_error(ErrorCode::kInvalidArgument, "the slice period must be a positive time");
  }
  // Checks the URL now, so a bad --upstream fails before serving.
  http::ClientOptions o;
  o.connect_timeout = options_.upstream_connect_timeout;
  o.request_timeout = options_.upstream_timeout;
  upstream_ = std::make_unique<http::AsyncClient>(options_.upstream, o);
  if (!options_.record_log.empty()) log_ = std::make_unique<AppendFile>(options_.record_log);
}

Proxy::~Proxy() { stop(); }

void Proxy::start() {
  {
    std::lock_guard lock(mutex_);
    if (started_) return;
    started_ = true;
    last_reading_ = meter_->read();
    started_at_ = clock_.now();
  }
  ticker_.start(clock_, options_.slice_period, [this] {
    std::lock_guard lock(mutex_);
    if (!stopped_) close_slice_locked();
  });
}

void Proxy::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopped_ || !started_) {
      stopped_ = true;
      return;
    }
  }
  stop_.request_stop();  // cancels every upstream exchange (their stop callbacks)
  {
    std::unique_lock lock(workers_mutex_);
    workers_done_.wait(lock, [&] { return in_flight_.load() == 0; });
  }
  ticker_.stop();
  std::lock_guard lock(mutex_);
  close_slice_locked();
  totals_.elapsed = clock_.now() - started_at_;
  stopped_ = true;
}

bool Proxy::enter() {
  if (in_flight_.fetch_add(1) >= options_.max_in_flight || stop_.stop_requested()) {
    leave();
    return false;
  }
  return true;
}

void Proxy::leave() {
  // Under workers_mutex_ with a notify, so stop() never misses the last one.
  std::lock_guard lock(workers_mutex_);
  in_flight_.fetch_sub(1);
  workers_done_.notify_all();
}

void Proxy::close_slice_locked() {
  const Joules now = meter_->read();
  // A counter that went back (a driver reload) gives the slice nothing.
  const Joules delta = now > last_reading_ ? now - last_reading_ : Joules(0.0);
  last_reading_ = now;
  attributor_.close_slice(delta);
}

void Proxy::begin(RequestId id, bool observed) {
  std::lock_guard lock(mutex_);
  close_slice_locked();  // what came before belongs to the requests already running
  attributor_.begin(id, observed);
}

void Proxy::add_tokens(RequestId id, double tokens) {
  std::lock_guard lock(mutex_);
  attributor_.add_tokens(id, tokens);
}

Joules Proxy::finish(RequestId id) {
  std::lock_guard lock(mutex_);
  attributor_.end(id);
  // The reading is taken before this slice closes, so the request's last
  // slice ends now; the attributor returns it with the slice.
  const Joules now = meter_->read();
  const Joules delta = now > last_reading_ ? now - last_reading_ : Joules(0.0);
  last_reading_ = now;
  for (const FinishedRequest& f : attributor_.close_slice(delta)) {
    if (f.id == id) return f.energy;
  }
  return Joules(0.0);  // unreachable: end() marked it for this slice
}

void Proxy::record(RequestRecord r) {
  {
    std::lock_guard lock(mutex_);
    ++totals_.requests;
    if (r.cancelled) ++totals_.cancelled;
    if (r.status < 200 || r.status >= 300) ++totals_.failed;
    ModelTotals& m = totals_.models[r.model];
    ++m.requests;
    m.energy += r.energy;
    if (r.prompt_tokens && *r.prompt_tokens > 0) m.prompt_tokens += *r.prompt_tokens;
    if (r.output_tokens && *r.output_tokens > 0) {
      m.output_tokens += *r.output_tokens;
      totals_.output_tokens += *r.output_tokens;
    }
  }
  if (log_) {
    std::lock_guard lock(log_mutex_);
    try {
      log_->append(r.to_json().dump() + "\n");
    } catch (const std::exception& e) {
      log::error("proxy: could not write the record of {} to {}: {}", r.request_id,
                 options_.record_log, e.what());
    }
  }
  if (options_.on_record) options_.on_record(r);
}

ProxySummary Proxy::summary() const {
  std::lock_guard lock(mutex_);
  ProxySummary s = totals_;
  s.measured = attributor_.measured();
  s.requests_energy = attributor_.attributed();
  s.idle = attributor_.idle();
  if (!stopped_ && started_) s.elapsed = clock_.now() - started_at_;
  return s;
}

void Proxy::add_routes(http::Router& router) {
  for (const char* path : {"/v1/chat/completions", "/v1/completions"}) {
    router.route_async(
        http::Method::kPost, path, [this, path](http::Request request, http::Responder responder) {
          auto x = std::make_shared<Exchange>();
          x->request = std::move(request);
          x->responder = responder;
          x->record.endpoint = path;
          try {
            x->completion = parse_completion_request(x->request.body, options_.ask_usage);
          } catch (const Error& e) {
            return responder.send(http::Response::error(400, e.what()));
          }
          if (!enter()) {
            return responder.send(http::Response::error(
                503, "the proxy is at its limit of requests in flight; retry later"));
          }
          start_completion(std::move(x));
        });
  }
  router.route_async(
      http::Method::kGet, "/v1/models", [this](http::Request request, http::Responder responder) {
        if (!enter()) {
          return responder.send(http::Response::error(503, "the proxy is at its limit"));
        }
        forward_plain(std::move(request), std::move(responder));
      });
  router.route(http::Method::kGet, "/zeus/metrics", [this](const http::Request&) {
    return http::Response::text(200, metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
}

// A plain request (GET /v1/models): the answer passed on whole.
void Proxy::forward_plain(http::Request request, http::Responder responder) {
  struct Plain {
    http::Responder responder{nullptr};
    std::shared_ptr<Upstream> upstream = std::make_shared<Upstream>();
    http::Response answer;
    bool too_large = false;
  };
  auto p = std::make_shared<Plain>();
  p->responder = std::move(responder);
  p->upstream->on_proxy_stop.emplace(stop_.get_token(), Upstream::canceller(p->upstream));
  http::AsyncHandlers h;
  h.on_head = [p](const http::ResponseHead& head) {
    p->answer.status = head.status;
    p->answer.headers = end_to_end(head.headers);
    return true;
  };
  h.on_body = [this, p](std::string_view bytes) {
    p->too_large = p->answer.body.size() + bytes.size() > options_.max_response_bytes;
    if (!p->too_large) p->answer.body.append(bytes);
    return !p->too_large;
  };
  h.on_done = [this, p](const http::AsyncOutcome& outcome) {
    using End = http::AsyncOutcome::End;
    if (outcome.end == End::kFailed) {
      p->responder.send(http::Response::error(502, "the inference server: " + outcome.message));
    } else if (p->too_large) {
      p->responder.send(
          http::Response::error(502, fmt::format("the inference server's answer is over {} bytes",
                                                 options_.max_response_bytes)));
    } else if (outcome.end == End::kStopped) {
      p->responder.send(
          http::Response::error(503, "the proxy is shutting down; retry the request"));
    } else {
      p->responder.send(std::move(p->answer));
    }
    p->upstream->on_proxy_stop.reset();
    leave();
  };
  std::lock_guard lock(p->upstream->mutex);
  if (p->upstream->cancelled) {
    p->upstream->on_proxy_stop.reset();
    p->responder.send(http::Response::error(503, "the proxy is shutting down; retry the request"));
    return leave();
  }
  p->upstream->call =
      upstream_->stream(p->responder.executor(), request.method, request.target,
                        std::move(request.body), end_to_end(request.headers), std::move(h));
}

void Proxy::start_completion(std::shared_ptr<Exchange> x) {
  x->executor = x->responder.executor();
  x->id = next_id_.fetch_add(1);
  RequestRecord& r = x->record;
  r.request_id = fmt::format("zp-{}", x->id);
  r.model = x->completion.model;
  r.stream = x->completion.stream;
  r.start_unix = wall_time_seconds();
  x->start = clock_.now();
  x->drop_usage = x->completion.usage_injected;
  try {
    begin(x->id, x->completion.stream);
  } catch (const std::exception& e) {
    log::error("proxy: reading the energy counters failed: {}", e.what());
    x->responder.send(http::Response::error(500, fmt::format("the proxy: {}", e.what())));
    return leave();
  }
  x->upstream->on_proxy_stop.emplace(stop_.get_token(), Upstream::canceller(x->upstream));
  start_attempt(x);
}

// Forwards the request (once more with the client's own body after a
// rejected stream_options). The callbacks run on the client connection's
// executor: a piece read from upstream is inspected and written to the
// client on the thread that read it. An event stream (200,
// text/event-stream) is passed on event by event; anything else (a
// non-streaming answer, an error) whole once read. The client leaving an
// event stream or stop() cancels the upstream exchange, which the inference
// server sees as a cancelled request. A client that leaves while waiting for
// a non-streaming answer is noticed only when the answer is written.
void Proxy::start_attempt(const std::shared_ptr<Exchange>& x) {
  http::AsyncHandlers h;
  h.on_head = [this, x](const http::ResponseHead& head) { return on_upstream_head(*x, head); };
  h.on_body = [this, x](std::string_view bytes) {
    try {
      return on_upstream_body(*x, bytes);
    } catch (const std::exception& e) {
      log::error("proxy: {}: {}", x->record.request_id, e.what());
      return false;
    }
  };
  h.on_done = [this, x](const http::AsyncOutcome& outcome) { on_upstream_done(x, outcome); };
  const std::string& body = x->attempt == 0 ? x->completion.upstream_body : x->request.body;
  {
    std::lock_guard lock(x->upstream->mutex);
    if (!x->upstream->cancelled) {
      x->upstream->call = upstream_->stream(x->executor, http::Method::kPost, x->request.target,
                                            body, end_to_end(x->request.headers), std::move(h));
      return;
    }
  }
  on_upstream_done(x, {http::AsyncOutcome::End::kStopped, ErrorCode::kIo, {}});
}

bool Proxy::on_upstream_head(Exchange& x, const http::ResponseHead& head) {
  x.status = head.status;
  if (x.attempt == 0 && x.drop_usage && (x.status == 400 || x.status == 422)) {
    x.retry_as_sent = true;
    return false;
  }
  const auto type = head.headers.get("Content-Type");
  x.streaming = x.status == 200 && type && type->starts_with("text/event-stream");
  if (!x.streaming) {
    x.head_fields = end_to_end(head.headers);
    return true;
  }
  http::Headers h = end_to_end(head.headers, true);
  h.set("X-Zeus-Request-Id", x.record.request_id);
  x.events = x.responder.start_events(std::move(h));
  x.events.on_close(Upstream::canceller(x.upstream));
  return true;
}

void Proxy::report_tokens(Exchange& x) {
  if (x.tokens > x.reported) add_tokens(x.id, static_cast<double>(x.tokens - x.reported));
  x.reported = x.tokens;
}

// Stops reading a server that sent more than a bound allows (false: the
// exchange ends; on_upstream_done answers 502).
bool Proxy::cut_off(Exchange& x, std::string what) {
  log::warn("proxy: {}: the inference server sent {}; cutting it off", x.record.request_id, what);
  x.too_large = true;
  x.too_large_what = std::move(what);
  return false;
}

bool Proxy::on_upstream_body(Exchange& x, std::string_view bytes) {
  if (!x.streaming) {
    if (x.buffered.size() + bytes.size() > options_.max_response_bytes) {
      return cut_off(x, fmt::format("an answer over {} bytes", options_.max_response_bytes));
    }
    x.buffered.append(bytes);
    return true;
  }
  x.stream_bytes += bytes.size();
  if (x.stream_bytes > options_.max_stream_bytes) {
    return cut_off(x, fmt::format("a stream over {} bytes", options_.max_stream_bytes));
  }
  RequestRecord& r = x.record;
  x.out.clear();
  x.splitter.feed(bytes, [&](std::string_view frame) {
    const EventInfo info = inspect_event(frame);
    x.saw_done = x.saw_done || info.done;
    if (info.tokens > 0) {
      if (!r.ttft) r.ttft = clock_.now() - x.start;
      x.tokens += info.tokens;
    }
    if (info.usage && info.no_choices && !x.ended) {
      // The final usage chunk: generation is over, so the energy is final.
      report_tokens(x);
      r.energy = finish(x.id);
      x.ended = true;
      Usage usage;
      auto framed = add_energy_to_event(frame, {r.energy, x.tokens}, usage);
      r.prompt_tokens = usage.prompt_tokens;
      r.output_tokens = usage.completion_tokens;
      if (!x.drop_usage) x.out += framed ? *framed : std::string(frame);
      return;
    }
    x.out.append(frame);
  });
  if (!x.ended) report_tokens(x);
  if (!x.out.empty() && !x.events.send_frames(std::move(x.out))) return false;
  // An event without end would otherwise grow here by all the server sends.
  if (x.splitter.pending_size() > options_.max_event_bytes) {
    return cut_off(x, fmt::format("an event over {} bytes", options_.max_event_bytes));
  }
  // Back-pressure: no further read while the client is behind.
  std::weak_ptr<Upstream> w = x.upstream;
  if (!x.events.when_drained(kClientBacklogBytes, [w] {
        if (auto up = w.lock()) up->resume();
      })) {
    x.upstream->pause();
  }
  return true;
}

void Proxy::on_upstream_done(const std::shared_ptr<Exchange>& xp,
                             const http::AsyncOutcome& outcome) {
  using End = http::AsyncOutcome::End;
  Exchange& x = *xp;
  const bool cancelled = x.upstream->was_cancelled();
  if (outcome.end == End::kStopped && x.retry_as_sent && x.attempt == 0 && !cancelled) {
    log::debug("proxy: {} rejected stream_options ({}); sending the request as the client did",
               options_.upstream, x.status);
    x.drop_usage = false;
    x.attempt = 1;
    return start_attempt(xp);
  }
  RequestRecord& r = x.record;
  try {
    const std::optional<std::string> upstream_error =
        outcome.end == End::kFailed ? std::optional(outcome.message) : std::nullopt;
    const bool whole = outcome.end == End::kComplete;
    // A client that closes right after [DONE] (or the usage chunk) did not cancel.
    const bool answered = x.saw_done || x.ended;
    if (!x.ended) {
      report_tokens(x);
      r.energy = finish(x.id);
      x.ended = true;
      if (x.streaming && !r.output_tokens) r.output_tokens = x.tokens;
    }
    r.duration = clock_.now() - x.start;
    // Stopped before the answer was whole: only stop() does that to a
    // non-streaming exchange (a stream's client may also have left).
    const bool interrupted = !whole && !upstream_error && !x.too_large;
    r.status = upstream_error || x.too_large ? 502 : (interrupted && !x.streaming ? 503 : x.status);
    r.cancelled = cancelled && !answered;
    if (x.streaming) {
      if (x.splitter.pending_size() > 0 && !x.too_large) {
        x.events.send_frames(std::string(x.splitter.pending()));
      }
      x.events.close();
    } else {
      http::Response answer;
      if (interrupted) {
        answer = http::Response::error(503, "the proxy is shutting down; retry the request");
      } else if (upstream_error || x.too_large) {
        answer = http::Response::error(
            502, upstream_error ? fmt::format("the inference server: {}", *upstream_error)
                                : fmt::format("the inference server sent {}", x.too_large_what));
      } else {
        answer.status = x.status;
        answer.headers = std::move(x.head_fields);
        answer.body = std::move(x.buffered);
        if (x.status >= 200 && x.status < 300) {
          Usage usage;
          if (auto body = add_energy_to_body(answer.body, {r.energy, std::nullopt}, usage)) {
            answer.body = std::move(*body);
          }
          r.prompt_tokens = usage.prompt_tokens;
          r.output_tokens = usage.completion_tokens;
          answer.headers.set("X-Zeus-Energy-Joules", number(r.energy.value()));
        }
      }
      answer.headers.set("X-Zeus-Request-Id", r.request_id);
      x.responder.send(std::move(answer));
    }
  } catch (const std::exception& e) {
    // The record is written and the request answered whatever happened.
    log::error("proxy: {} failed: {}", r.request_id, e.what());
    if (!x.ended) r.status = 500;
    x.events.close();
    x.responder.send(http::Response::error(500, fmt::format("the proxy: {}", e.what())));
  }
  record(std::move(r));
  x.upstream->on_proxy_stop.reset();
  leave();
}

std::string Proxy::metrics() {
  const ProxySummary s = summary();
  std::size_t active = 0;
  {
    std::lock_guard lock(mutex_);
    active = attributor_.active();
  }
  std::optional<Watts> power;
  try {
    power = meter_->power();
  } catch (const std::exception& e) {
    log::warn("proxy: reading GPU power for the metrics failed: {}", e.what());
  }
  return render_metrics(s, active, power);
}

}  // namespace zeus::proxy
