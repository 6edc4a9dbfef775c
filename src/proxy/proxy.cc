#include "zeus/proxy/proxy.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>

#include "zeus/proxy/openai.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::proxy {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Fields that belong to one hop (RFC 9110 7.6.1) or that the server or
// client underneath sets for the message it actually sends.
bool hop_by_hop(std::string_view name) {
  for (std::string_view h : {"connection", "keep-alive", "proxy-connection", "transfer-encoding",
                             "te", "trailer", "upgrade", "host", "content-length"}) {
    if (iequals(name, h)) return true;
  }
  return false;
}

http::Headers end_to_end(const http::Headers& in, bool for_event_stream = false) {
  http::Headers out;
  for (const auto& [k, v] : in.fields()) {
    if (hop_by_hop(k)) continue;
    // The event-stream answer sets these itself.
    if (for_event_stream && (iequals(k, "content-type") || iequals(k, "cache-control"))) continue;
    out.add(k, v);
  }
  return out;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string number(double v) { return fmt::format("{:.6g}", v); }

}  // namespace

// ---------------------------------------------------------------------------
// Proxy

struct Proxy::Exchange {
  http::Request request;
  http::Responder responder;
  CompletionRequest completion;
  RequestId id = 0;
  RequestRecord record;
  Seconds start{0.0};
  bool ended = false;  // the attribution of `id` is closed
};

Proxy::Proxy(ProxyOptions options, std::unique_ptr<EnergyMeter> meter, Clock& clock)
    : options_(std::move(options)), meter_(std::move(meter)), clock_(clock) {
  // Checks the URL now, so a bad --upstream fails before serving.
  http::Client check(options_.upstream);
  if (options_.slice_period.count() <= 0 || !std::isfinite(options_.slice_period.count())) {
    throw_error(ErrorCode::kInvalidArgument, "the slice period must be a positive time");
  }
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
  stop_.request_stop();
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

bool Proxy::spawn(std::function<void()> work) {
  // Every decrement happens under workers_mutex_ with a notify, so stop()
  // never misses the last one (also a refused spawn's, racing stop()).
  const auto leave = [this] {
    std::lock_guard lock(workers_mutex_);
    in_flight_.fetch_sub(1);
    workers_done_.notify_all();
  };
  if (in_flight_.fetch_add(1) >= options_.max_in_flight || stop_.stop_requested()) {
    leave();
    return false;
  }
  try {
    std::thread([this, work = std::move(work)] {
      try {
        work();
      } catch (const std::exception& e) {
        log::error("proxy: a request failed: {}", e.what());
      }
      std::lock_guard lock(workers_mutex_);
      in_flight_.fetch_sub(1);
      workers_done_.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    leave();
    return false;
  }
  return true;
}

std::unique_ptr<http::Client> Proxy::take_client() {
  {
    std::lock_guard lock(pool_mutex_);
    if (!pool_.empty()) {
      auto c = std::move(pool_.back());
      pool_.pop_back();
      return c;
    }
  }
  http::ClientOptions o;
  o.connect_timeout = options_.upstream_connect_timeout;
  o.request_timeout = options_.upstream_timeout;
  o.max_response_bytes = options_.max_response_bytes;
  return std::make_unique<http::Client>(options_.upstream, o);
}

void Proxy::give_back(std::unique_ptr<http::Client> client) {
  std::lock_guard lock(pool_mutex_);
  if (pool_.size() < 64) pool_.push_back(std::move(client));
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
          auto x = std::make_shared<Exchange>(
              Exchange{std::move(request), responder, {}, 0, {}, Seconds(0.0), false});
          x->record.endpoint = path;
          try {
            x->completion = parse_completion_request(x->request.body, options_.ask_usage);
          } catch (const Error& e) {
            return responder.send(http::Response::error(400, e.what()));
          }
          if (!spawn([this, x] { run_completion(x); })) {
            responder.send(http::Response::error(
                503, "the proxy is at its limit of requests in flight; retry later"));
          }
        });
  }
  router.route_async(http::Method::kGet, "/v1/models",
                     [this](http::Request request, http::Responder responder) {
                       auto r = std::make_shared<http::Request>(std::move(request));
                       if (!spawn([this, r, responder] { forward_plain(*r, responder); })) {
                         responder.send(http::Response::error(503, "the proxy is at its limit"));
                       }
                     });
  router.route(http::Method::kGet, "/zeus/metrics", [this](const http::Request&) {
    return http::Response::text(200, metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
}

void Proxy::forward_plain(const http::Request& request, const http::Responder& responder) {
  auto client = take_client();
  try {
    http::Response up =
        client->request(request.method, request.target, request.body, end_to_end(request.headers));
    http::Response out;
    out.status = up.status;
    out.headers = end_to_end(up.headers);
    out.body = std::move(up.body);
    responder.send(std::move(out));
    give_back(std::move(client));
  } catch (const Error& e) {
    responder.send(http::Response::error(502, fmt::format("the inference server: {}", e.what())));
  }
}

void Proxy::run_completion(std::shared_ptr<Exchange> x) {
  x->id = next_id_.fetch_add(1);
  RequestRecord& r = x->record;
  r.request_id = fmt::format("zp-{}", x->id);
  r.model = x->completion.model;
  r.stream = x->completion.stream;
  r.start_unix = unix_now();
  x->start = clock_.now();
  begin(x->id, x->completion.stream);
  try {
    run_exchange(*x);
  } catch (...) {
    // The record is written and the attribution closed whatever happened.
    if (!x->ended) r.energy = finish(x->id);
    record(std::move(r));
    throw;
  }
  record(std::move(r));
}

// Streams the upstream answer: an event stream (200, text/event-stream) is
// passed on event by event as it comes; anything else (a non-streaming
// answer, an error) is passed on whole once read. The client leaving an
// event stream (the server watches those connections) or the proxy stopping
// aborts the upstream exchange, which the inference server sees as a
// cancelled request. A client that leaves while waiting for a non-streaming
// answer is only noticed when the answer is written, as with any server.
void Proxy::run_exchange(Exchange& x) {
  RequestRecord& r = x.record;
  std::stop_source stop;  // copies share the state; the callbacks hold copies
  std::stop_callback on_proxy_stop(stop_.get_token(), [stop]() mutable { stop.request_stop(); });
  http::EventStream events;
  bool streaming = false;
  std::string buffered;
  bool too_large = false;
  int status = 0;
  http::Headers head_fields;
  EventSplitter splitter;
  std::int64_t tokens = 0;    // seen in the stream
  std::int64_t reported = 0;  // of them, given to the attributor
  // The usage chunk the proxy asked for (not the client) is not passed on.
  bool drop_usage = x.completion.usage_injected;
  // A server that rejects the stream_options the proxy added gets the
  // client's own body once more.
  bool retry_as_sent = false;
  const auto report_tokens = [&] {
    if (tokens > reported) add_tokens(x.id, static_cast<double>(tokens - reported));
    reported = tokens;
  };
  bool saw_done = false;  // the answer is complete even if the client leaves now
  std::string out;
  const auto on_event = [&](std::string_view frame) {
    const EventInfo info = inspect_event(frame);
    saw_done = saw_done || info.done;
    if (info.tokens > 0) {
      if (!r.ttft) r.ttft = clock_.now() - x.start;
      tokens += info.tokens;
    }
    if (info.usage && info.no_choices && !x.ended) {
      // The final usage chunk: generation is over, so the energy is final.
      report_tokens();
      r.energy = finish(x.id);
      x.ended = true;
      Usage usage;
      auto framed = add_energy_to_event(frame, {r.energy, tokens}, usage);
      r.prompt_tokens = usage.prompt_tokens;
      r.output_tokens = usage.completion_tokens;
      if (!drop_usage) out += framed ? *framed : std::string(frame);
      return;
    }
    out.append(frame);
  };
  std::optional<std::string> upstream_error;
  auto client = take_client();
  bool whole = false;  // the upstream answer was read to its end
  try {
    for (int attempt = 0; attempt < 2; ++attempt) {
      const std::string& body = attempt == 0 ? x.completion.upstream_body : x.request.body;
      whole = client->stream(
          http::Method::kPost, x.request.target, body, end_to_end(x.request.headers),
          [&](const http::ResponseHead& head) {
            status = head.status;
            if (attempt == 0 && drop_usage && (status == 400 || status == 422)) {
              retry_as_sent = true;
              return false;
            }
            const auto type = head.headers.get("Content-Type");
            streaming = status == 200 && type && type->starts_with("text/event-stream");
            if (!streaming) {
              head_fields = end_to_end(head.headers);
              return true;
            }
            http::Headers h = end_to_end(head.headers, true);
            h.set("X-Zeus-Request-Id", r.request_id);
            events = x.responder.start_events(std::move(h));
            events.on_close([stop]() mutable { stop.request_stop(); });
            return true;
          },
          [&](std::string_view bytes) {
            if (!streaming) {
              too_large = buffered.size() + bytes.size() > options_.max_response_bytes;
              if (!too_large) buffered.append(bytes);
              return !too_large;
            }
            out.clear();
            splitter.feed(bytes, on_event);
            if (!x.ended) report_tokens();
            return out.empty() || events.send_frames(std::move(out));
          },
          stop.get_token());
      if (!retry_as_sent || attempt == 1 || stop.stop_requested()) break;
      log::debug("proxy: {} rejected stream_options ({}); sending the request as the client did",
                 options_.upstream, status);
      drop_usage = false;
    }
  } catch (const Error& e) {
    upstream_error = e.what();
  }
  give_back(std::move(client));
  // A client that closes right after [DONE] (or the usage chunk) did not cancel.
  const bool answered = saw_done || x.ended;
  if (!x.ended) {
    report_tokens();
    r.energy = finish(x.id);
    x.ended = true;
    if (streaming && !r.output_tokens) r.output_tokens = tokens;
  }
  r.duration = clock_.now() - x.start;
  // Stopped before the answer was whole: only stop() does that to a
  // non-streaming exchange (a stream's client may also have left).
  const bool interrupted = !whole && !upstream_error && !too_large;
  r.status = upstream_error || too_large ? 502 : (interrupted && !streaming ? 503 : status);
  r.cancelled = stop.stop_requested() && !answered;
  if (streaming) {
    if (splitter.pending_size() > 0) events.send_frames(std::string(splitter.pending()));
    events.close();
    return;
  }
  http::Response answer;
  if (interrupted) {
    answer = http::Response::error(503, "the proxy is shutting down; retry the request");
  } else if (upstream_error || too_large) {
    answer = http::Response::error(
        502, upstream_error ? fmt::format("the inference server: {}", *upstream_error)
                            : fmt::format("the inference server's answer is over {} bytes",
                                          options_.max_response_bytes));
  } else {
    answer.status = status;
    answer.headers = std::move(head_fields);
    answer.body = std::move(buffered);
    if (status >= 200 && status < 300) {
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
