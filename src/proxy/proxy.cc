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
// Meter

GpuEnergyMeter::GpuEnergyMeter(std::vector<std::shared_ptr<Gpu>> gpus) : gpus_(std::move(gpus)) {
  if (gpus_.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                "the proxy has no GPU to measure; check `zeus show-env` or pick GPUs with --gpus");
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (!gpus_[i]->supports_energy_counter()) {
      throw_error(ErrorCode::kNotSupported,
                  fmt::format("GPU {} ({}) has no energy counter (Volta or newer is needed): the "
                              "proxy splits counter energy, not sampled power",
                              i, gpus_[i]->name()));
    }
  }
}

Joules GpuEnergyMeter::read() {
  Joules total{0.0};
  for (auto& g : gpus_) total += g->total_energy();
  return total;
}

Watts GpuEnergyMeter::power() {
  Watts total{0.0};
  for (auto& g : gpus_) total += g->power(PowerDomain::kDeviceInstant);
  return total;
}

// ---------------------------------------------------------------------------
// Records and summary

std::optional<double> RequestRecord::joules_per_output_token() const {
  if (!output_tokens || *output_tokens <= 0) return std::nullopt;
  return energy.value() / static_cast<double>(*output_tokens);
}

nlohmann::ordered_json RequestRecord::to_json() const {
  nlohmann::ordered_json j;
  j["request_id"] = request_id;
  j["start_time"] = start_unix;
  j["endpoint"] = endpoint;
  j["model"] = model;
  j["stream"] = stream;
  j["status"] = status;
  j["cancelled"] = cancelled;
  j["prompt_tokens"] = prompt_tokens ? nlohmann::ordered_json(*prompt_tokens) : nullptr;
  j["output_tokens"] = output_tokens ? nlohmann::ordered_json(*output_tokens) : nullptr;
  j["ttft_s"] = ttft ? nlohmann::ordered_json(ttft->count()) : nullptr;
  j["duration_s"] = duration.count();
  j["energy_j"] = energy.value();
  const auto jpt = joules_per_output_token();
  j["energy_per_output_token_j"] = jpt ? nlohmann::ordered_json(*jpt) : nullptr;
  return j;
}

std::string format_summary(const ProxySummary& s) {
  std::string out = fmt::format(
      "zeus proxy: {} requests ({} cancelled, {} failed), {} output tokens in {:.1f} s\n"
      "  measured {:.1f} J = requests {:.1f} J + idle {:.1f} J\n",
      s.requests, s.cancelled, s.failed, s.output_tokens, s.elapsed.count(), s.measured.value(),
      s.requests_energy.value(), s.idle.value());
  for (const auto& [model, t] : s.models) {
    const double per_request = t.requests ? t.energy.value() / static_cast<double>(t.requests) : 0;
    out += fmt::format("  {}: {} requests, {:.3f} J/request", model.empty() ? "(no model)" : model,
                       t.requests, per_request);
    if (t.output_tokens > 0) {
      out += fmt::format(", {:.4f} J/output token",
                         t.energy.value() / static_cast<double>(t.output_tokens));
    }
    out += '\n';
  }
  return out;
}

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
  const bool drop_usage =
      x.completion.stream && !x.completion.usage_requested && options_.ask_usage;
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
    whole = client->stream(
        http::Method::kPost, x.request.target, x.completion.upstream_body,
        end_to_end(x.request.headers),
        [&](const http::ResponseHead& head) {
          status = head.status;
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
  std::string out;
  const auto head = [&](std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  const auto line = [&](std::string_view name, std::string_view labels, double v) {
    if (labels.empty()) {
      out += fmt::format("{} {}\n", name, number(v));
    } else {
      out += fmt::format("{}{{{}}} {}\n", name, labels, number(v));
    }
  };
  const auto model_label = [](const std::string& m) {
    std::string escaped;
    for (char c : m) {
      if (c == '\\' || c == '"') escaped.push_back('\\');
      if (c == '\n') {
        escaped += "\\n";
        continue;
      }
      escaped.push_back(c);
    }
    return fmt::format("model=\"{}\"", escaped);
  };
  head("zeus_proxy_requests_total", "counter", "Completions forwarded, by model.");
  for (const auto& [m, t] : s.models) line("zeus_proxy_requests_total", model_label(m), t.requests);
  head("zeus_proxy_request_energy_joules_total", "counter",
       "GPU energy attributed to completions, by model.");
  for (const auto& [m, t] : s.models) {
    line("zeus_proxy_request_energy_joules_total", model_label(m), t.energy.value());
  }
  head("zeus_proxy_output_tokens_total", "counter", "Output tokens of completions, by model.");
  for (const auto& [m, t] : s.models) {
    line("zeus_proxy_output_tokens_total", model_label(m), t.output_tokens);
  }
  head("zeus_proxy_prompt_tokens_total", "counter", "Prompt tokens of completions, by model.");
  for (const auto& [m, t] : s.models) {
    line("zeus_proxy_prompt_tokens_total", model_label(m), t.prompt_tokens);
  }
  head("zeus_proxy_energy_per_request_joules", "gauge",
       "Mean GPU energy of a completion since the proxy started, by model.");
  for (const auto& [m, t] : s.models) {
    if (t.requests > 0) {
      line("zeus_proxy_energy_per_request_joules", model_label(m),
           t.energy.value() / static_cast<double>(t.requests));
    }
  }
  head("zeus_proxy_energy_per_output_token_joules", "gauge",
       "GPU energy per output token since the proxy started, by model.");
  for (const auto& [m, t] : s.models) {
    if (t.output_tokens > 0) {
      line("zeus_proxy_energy_per_output_token_joules", model_label(m),
           t.energy.value() / static_cast<double>(t.output_tokens));
    }
  }
  head("zeus_proxy_idle_energy_joules_total", "counter",
       "GPU energy of slices with no request in flight (not attributed).");
  line("zeus_proxy_idle_energy_joules_total", "", s.idle.value());
  head("zeus_proxy_measured_energy_joules_total", "counter",
       "GPU energy measured since the proxy started (attributed + idle).");
  line("zeus_proxy_measured_energy_joules_total", "", s.measured.value());
  head("zeus_proxy_active_requests", "gauge", "Completions in flight.");
  line("zeus_proxy_active_requests", "", static_cast<double>(active));
  head("zeus_proxy_gpu_power_watts", "gauge", "Instant power of the measured GPUs together.");
  try {
    line("zeus_proxy_gpu_power_watts", "", meter_->power().value());
  } catch (const std::exception& e) {
    log::warn("proxy: reading GPU power for the metrics failed: {}", e.what());
  }
  return out;
}

}  // namespace zeus::proxy
