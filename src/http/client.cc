// The blocking HTTP client on Boost.Asio + Boost.Beast. Each operation runs
// asynchronously on a private io_context for at most its deadline
// (run_for), so one code path gives timeouts over TCP and Unix sockets.
#include "zeus/http/client.h"

#include <fmt/format.h>

#include <chrono>
#include <limits>
#include <optional>

#include "beast.h"
#include "client_target.h"
#include "zeus/util/error.h"

namespace zeus::http {

namespace {
std::string str(beast::string_view s) { return {s.data(), s.size()}; }
}  // namespace

namespace {

// A failed exchange; `retryable` when nothing of an answer had arrived on a
// connection the server may have closed while idle.
struct TransportError {
  ErrorCode code;
  std::string message;
  bool retryable;
};

// Feeds received bytes to an event callback, one event per blank line.
class EventParser {
 public:
  explicit EventParser(const std::function<bool(const Event&)>& cb) : cb_(cb) {}
  // False once the callback asked to stop.
  bool feed(std::string_view bytes) {
    pending_.append(bytes);
    std::size_t start = 0;
    for (;;) {
      const auto nl = pending_.find('\n', start);
      if (nl == std::string::npos) break;
      std::string_view line(pending_.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      start = nl + 1;
      if (!on_line(line)) {
        pending_.erase(0, start);
        return false;
      }
    }
    pending_.erase(0, start);
    return true;
  }

 private:
  bool on_line(std::string_view line) {
    if (line.empty()) {
      if (!has_data_ && current_.event.empty()) return true;
      Event e = std::move(current_);
      current_ = {};
      has_data_ = false;
      return cb_(e);
    }
    if (line.front() == ':') return true;
    const auto colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (has_data_) current_.data.push_back('\n');
      current_.data.append(value);
      has_data_ = true;
    } else if (field == "event") {
      current_.event = std::string(value);
    } else if (field == "id") {
      current_.id = std::string(value);
    }
    return true;
  }

  const std::function<bool(const Event&)>& cb_;
  std::string pending_;
  Event current_;
  bool has_data_ = false;
};

}  // namespace

class Client::Impl {
 public:
  Impl(std::string_view url, ClientOptions o)
      : base_url(url), target(detail::parse_base_url(url)), options(o) {}

  // Runs one asynchronous operation to completion or its deadline.
  template <class Start>
  error_code run(Seconds timeout, Start&& start) {
    ioc.restart();
    bool done = false;
    error_code result;
    start([&](error_code ec, auto&&...) {
      done = true;
      result = ec;
    });
    ioc.run_for(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
    if (!done) {
      drop();
      ioc.restart();
      ioc.run();  // lets the cancelled operation complete
      throw TransportError{ErrorCode::kTimeout, "timed out", false};
    }
    return result;
  }

  void connect() {
    buffer.clear();
    error_code ec;
    if (target.is_unix) {
      unix_socket.emplace(ioc);
      ec = run(options.connect_timeout,
               [&](auto&& h) { unix_socket->async_connect(local::endpoint(target.path), h); });
    } else {
      if (!endpoints) {
        tcp::resolver resolver(ioc);
        error_code rec;
        endpoints = resolver.resolve(target.host, target.port, rec);
        if (rec) {
          throw TransportError{ErrorCode::kIo,
                               fmt::format("cannot resolve {}: {}", target.host, rec.message()),
                               false};
        }
      }
      tcp_socket.emplace(ioc);
      ec = run(options.connect_timeout,
               [&](auto&& h) { asio::async_connect(*tcp_socket, *endpoints, h); });
      if (!ec) tcp_socket->set_option(tcp::no_delay(true), ec);
    }
    if (ec) {
      drop();
      throw TransportError{ErrorCode::kIo, fmt::format("cannot connect: {}", ec.message()), false};
    }
  }

  void drop() {
    error_code ignored;
    if (tcp_socket) tcp_socket->close(ignored);
    if (unix_socket) unix_socket->close(ignored);
    tcp_socket.reset();
    unix_socket.reset();
    buffer.clear();
  }
  bool connected() const { return tcp_socket.has_value() || unix_socket.has_value(); }

  template <class Fn>
  auto with_stream(Fn&& fn) {
    if (tcp_socket) return fn(*tcp_socket);
    return fn(*unix_socket);
  }

  bhttp::request<bhttp::string_body> make_request(Method method, std::string_view path,
                                                  std::string_view body, const Headers& headers) {
    return detail::build_request(target, method, path, body, headers);
  }

  Response exchange(Method method, std::string_view path, std::string_view body,
                    const Headers& headers) {
    bhttp::request<bhttp::string_body> req = make_request(method, path, body, headers);
    const bool reused = connected();
    if (!reused) connect();
    error_code ec = with_stream([&](auto& s) {
      return run(options.request_timeout, [&](auto&& h) { bhttp::async_write(s, req, h); });
    });
    if (ec) {
      drop();
      throw TransportError{ErrorCode::kIo, fmt::format("sending failed: {}", ec.message()), reused};
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(options.max_response_bytes);
    parser.header_limit(64 << 10);
    ec = with_stream([&](auto& s) {
      return run(options.request_timeout,
                 [&](auto&& h) { bhttp::async_read(s, buffer, parser, h); });
    });
    if (ec) {
      const bool nothing = !parser.got_some();
      drop();
      throw TransportError{ErrorCode::kIo,
                           fmt::format("reading the answer failed: {}", ec.message()),
                           reused && nothing};
    }
    auto& msg = parser.get();
    Response r;
    r.status = static_cast<int>(msg.result_int());
    for (const auto& f : msg) r.headers.add(str(f.name_string()), str(f.value()));
    r.body = std::move(msg.body());
    if (!msg.keep_alive()) drop();
    return r;
  }

  std::string where() const { return target.where(); }

  std::string base_url;
  detail::Target target;
  ClientOptions options;
  asio::io_context ioc;
  std::optional<tcp::resolver::results_type> endpoints;
  std::optional<tcp::socket> tcp_socket;
  std::optional<local::socket> unix_socket;
  beast::flat_buffer buffer;
};

Client::Client(std::string_view base_url, ClientOptions options)
    : impl_(std::make_unique<Impl>(base_url, options)) {}
Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

Response Client::request(Method method, std::string_view target, std::string_view body,
                         const Headers& headers) {
  for (int attempt = 0;; ++attempt) {
    try {
      return impl_->exchange(method, target, body, headers);
    } catch (const TransportError& e) {
      if (e.retryable && attempt == 0) continue;  // the server had closed the idle connection
      throw_error(e.code, fmt::format("{} {} on {}: {}", method_name(method), target,
                                      impl_->where(), e.message));
    }
  }
}

Response Client::post_json(std::string_view target, std::string_view json_body) {
  Headers h;
  h.set("Content-Type", "application/json");
  return request(Method::kPost, target, json_body, h);
}

bool Client::stream(Method method, std::string_view target, std::string_view body,
                    const Headers& headers, const std::function<bool(const ResponseHead&)>& on_head,
                    const std::function<bool(std::string_view)>& on_body, std::stop_token stop) {
  Impl& c = *impl_;
  bool completed = false;
  bool keep = false;
  const auto stopped = [&] { return stop.stop_requested(); };
  try {
    bhttp::request<bhttp::string_body> req = c.make_request(method, target, body, headers);
    // A stop closes the socket on the client's own io_context, which aborts
    // the read in progress (or the next one).
    std::optional<std::stop_callback<std::function<void()>>> on_stop;
    on_stop.emplace(stop, std::function<void()>([&c] {
                      asio::post(c.ioc, [&c] {
                        error_code ignored;
                        if (c.tcp_socket) c.tcp_socket->close(ignored);
                        if (c.unix_socket) c.unix_socket->close(ignored);
                      });
                    }));
    std::optional<bhttp::response_parser<bhttp::buffer_body>> parser;
    error_code ec;
    for (int attempt = 0;; ++attempt) {
      const bool reused = c.connected();
      if (!reused) c.connect();
      parser.emplace();
      // Not boost::none: Boost 1.74 compares a Content-Length against none
      // as if it were 0 (every sized body fails).
      parser->body_limit(std::numeric_limits<std::uint64_t>::max());
      parser->header_limit(64 << 10);
      ec = c.with_stream([&](auto& s) {
        return c.run(c.options.request_timeout, [&](auto&& h) { bhttp::async_write(s, req, h); });
      });
      if (!ec) {
        ec = c.with_stream([&](auto& s) {
          return c.run(c.options.request_timeout,
                       [&](auto&& h) { bhttp::async_read_header(s, c.buffer, *parser, h); });
        });
      }
      // The server had closed the idle keep-alive connection: once more, anew.
      if (ec && !stopped() && reused && attempt == 0 && !parser->got_some()) {
        c.drop();
        continue;
      }
      break;
    }
    if (ec && !stopped()) throw TransportError{ErrorCode::kIo, ec.message(), false};
    bool go_on = !ec && !stopped();
    if (go_on) {
      ResponseHead head;
      head.status = static_cast<int>(parser->get().result_int());
      for (const auto& f : parser->get()) head.headers.add(str(f.name_string()), str(f.value()));
      go_on = on_head(head);
      completed = go_on && parser->is_done();  // a body-less answer
    }
    std::array<char, 16384> chunk;
    while (go_on && !parser->is_done()) {
      parser->get().body().data = chunk.data();
      parser->get().body().size = chunk.size();
      ec = c.with_stream([&](auto& s) {
        return c.run(c.options.request_timeout,
                     [&](auto&& h) { bhttp::async_read_some(s, c.buffer, *parser, h); });
      });
      if (ec == bhttp::error::need_buffer) ec = {};
      const std::size_t n = chunk.size() - parser->get().body().size;
      if (stopped()) break;
      if (n > 0 && !on_body(std::string_view(chunk.data(), n))) break;
      if (ec == bhttp::error::end_of_stream || ec == asio::error::eof) {
        completed = true;
        break;
      }
      if (ec) throw TransportError{ErrorCode::kIo, ec.message(), false};
      completed = parser->is_done();
    }
    // A body that ended on a keep-alive connection leaves it for the next request.
    keep = completed && parser->is_done() && parser->get().keep_alive();
    on_stop.reset();
  } catch (const TransportError& e) {
    c.drop();
    c.ioc.restart();
    c.ioc.poll();
    if (stopped()) return false;
    throw_error(e.code,
                fmt::format("{} {} on {}: {}", method_name(method), target, c.where(), e.message));
  }
  c.ioc.restart();
  c.ioc.poll();  // runs a stop's close that was posted but not run, before the next request
  if (!keep || stopped()) c.drop();
  return completed;
}

void Client::stream_events(std::string_view target,
                           const std::function<bool(const Event&)>& on_event) {
  Headers headers;
  headers.set("Accept", "text/event-stream");
  EventParser events(on_event);
  int status = 0;
  stream(
      Method::kGet, target, {}, headers,
      [&](const ResponseHead& head) {
        status = head.status;
        return status == 200;
      },
      [&](std::string_view bytes) { return events.feed(bytes); });
  if (status != 200) {
    throw_error(ErrorCode::kIo, fmt::format("event stream {} on {}: the server answered {}", target,
                                            impl_->where(), status));
  }
}

void Client::close() { impl_->drop(); }

const std::string& Client::base_url() const { return impl_->base_url; }

}  // namespace zeus::http
