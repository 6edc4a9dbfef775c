// The asynchronous client on Boost.Asio + Boost.Beast: each exchange is a
// chain of asynchronous operations on the caller's executor (a server
// connection's strand), so its callbacks run where the server writes that
// connection. One lazy deadline timer per exchange: a read only moves the
// deadline (no timer syscall per piece); the timer re-arms itself when it
// fires early. Idle keep-alive connections are pooled as plain descriptors,
// so the pool outlives any io_context and a connection can serve an exchange
// on another executor next.
#include "http/async_client.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include "beast.h"
#include "client_target.h"
#include "executor_impl.h"

namespace zeus::http {

using steady = std::chrono::steady_clock;

struct AsyncClient::Shared {
  struct Idle {
    int fd;
    bool v6;  // TCP over IPv6 (the socket's protocol, to adopt it again)
  };

  Shared(std::string_view url, ClientOptions o, std::size_t max)
      : target(detail::parse_base_url(url)), options(o), max_idle(max) {}
  ~Shared() {
    for (const Idle& i : idle) ::close(i.fd);
  }

  std::optional<Idle> take() {
    std::lock_guard lock(mutex);
    if (idle.empty()) return std::nullopt;
    Idle i = idle.back();
    idle.pop_back();
    return i;
  }
  void put(Idle i) {
    std::unique_lock lock(mutex);
    if (idle.size() < max_idle) {
      idle.push_back(i);
      return;
    }
    lock.unlock();
    ::close(i.fd);
  }
  // The TCP endpoints, resolved once; empty with `error` set on failure.
  std::vector<tcp::endpoint> resolve(std::string& error) {
    std::lock_guard lock(mutex);
    if (!endpoints) {
      asio::io_context ioc;
      tcp::resolver resolver(ioc);
      error_code ec;
      const auto results = resolver.resolve(target.host, target.port, ec);
      if (ec) {
        error = fmt::format("cannot resolve {}: {}", target.host, ec.message());
        return {};
      }
      endpoints.emplace();
      for (const auto& r : results) endpoints->push_back(r.endpoint());
    }
    return *endpoints;
  }

  const detail::Target target;
  const ClientOptions options;
  const std::size_t max_idle;
  mutable std::mutex mutex;  // guards endpoints and idle
  std::optional<std::vector<tcp::endpoint>> endpoints;
  std::vector<Idle> idle;
};

namespace {

using End = AsyncOutcome::End;

// One exchange. Every member function but the constructor, cancel() and
// resume() runs on ex_, one at a time, so the state needs no lock.
class Call final : public AsyncCall, public std::enable_shared_from_this<Call> {
 public:
  Call(std::shared_ptr<AsyncClient::Shared> shared, asio::any_io_executor ex, Method method,
       std::string path, bhttp::request<bhttp::string_body> request, AsyncHandlers handlers)
      : shared_(std::move(shared)),
        ex_(std::move(ex)),
        method_(method),
        path_(std::move(path)),
        request_(std::move(request)),
        handlers_(std::move(handlers)),
        timer_(ex_) {}

  ~Call() override {
    // Only when the executor's context was destroyed with this exchange's
    // handlers still queued: the caller still hears that it ended.
    if (!done_) {
      done_ = true;
      if (handlers_.on_done) {
        handlers_.on_done({End::kStopped, ErrorCode::kIo, "the I/O context went away"});
      }
    }
  }

  void start() {
    asio::post(ex_, [self = shared_from_this()] { self->begin(); });
  }
  void cancel() override {
    asio::post(ex_, [self = shared_from_this()] { self->on_cancel(); });
  }
  void pause() override {
    paused_ = true;
    hold_ = shared_from_this();  // no operation pending holds it meanwhile
  }
  void resume() override {
    asio::post(ex_, [self = shared_from_this()] {
      if (self->done_ || !self->paused_) return;
      self->paused_ = false;
      self->hold_.reset();
      if (!self->pending_) self->read_body();
    });
  }

 private:
  const detail::Target& target() const { return shared_->target; }
  const ClientOptions& options() const { return shared_->options; }

  template <class Fn>
  void with_socket(Fn&& fn) {
    if (tcp_) return fn(*tcp_);
    fn(*unix_);
  }
  void close_socket() {
    error_code ignored;
    if (tcp_) tcp_->close(ignored);
    if (unix_) unix_->close(ignored);
  }

  // The deadline of the operation now pending.
  void set_deadline(Seconds d) {
    deadline_ = steady::now() + std::chrono::duration_cast<steady::duration>(d);
    if (watching_ && watch_until_ <= deadline_) return;  // fires early, then re-arms
    watch();
  }
  void watch() {
    const auto gen = ++watch_generation_;
    watching_ = true;
    watch_until_ = deadline_;
    timer_.expires_at(deadline_);
    timer_.async_wait([self = shared_from_this(), gen](error_code ec) {
      if (gen != self->watch_generation_) return;
      self->watching_ = false;
      if (ec || self->done_ || !self->pending_) return;
      if (steady::now() < self->deadline_) return self->watch();
      self->timed_out_ = true;
      self->close_socket();  // the pending operation completes with an error
    });
  }

  void begin() {
    if (done_) return;
    if (cancelled_) return finish({End::kStopped, ErrorCode::kIo, {}});
    if (auto idle = shared_->take()) {
      error_code ec;
      if (target().is_unix) {
        unix_.emplace(ex_);
        unix_->assign(local(), idle->fd, ec);
      } else {
        tcp_.emplace(ex_);
        tcp_->assign(idle->v6 ? tcp::v6() : tcp::v4(), idle->fd, ec);
      }
      if (!ec) {
        reused_ = true;
        return send();
      }
      ::close(idle->fd);
      tcp_.reset();
      unix_.reset();
    }
    connect();
  }

  void connect() {
    reused_ = false;
    tcp_.reset();
    unix_.reset();
    pending_ = true;
    set_deadline(options().connect_timeout);
    auto done = [self = shared_from_this()](error_code ec) {
      self->pending_ = false;
      self->on_connected(ec);
    };
    if (target().is_unix) {
      unix_.emplace(ex_);
      unix_->async_connect(local::endpoint(target().path), std::move(done));
      return;
    }
    std::string error;
    const auto endpoints = shared_->resolve(error);
    if (endpoints.empty()) {
      pending_ = false;
      return fail(ErrorCode::kIo, error);
    }
    tcp_.emplace(ex_);
    asio::async_connect(
        *tcp_, endpoints,
        [done = std::move(done)](error_code ec, const tcp::endpoint&) mutable { done(ec); });
  }

  void on_connected(error_code ec) {
    if (cancelled_) return finish({End::kStopped, ErrorCode::kIo, {}});
    if (ec) {
      return fail(timed_out_ ? ErrorCode::kTimeout : ErrorCode::kIo,
                  timed_out_ ? std::string("cannot connect: timed out")
                             : fmt::format("cannot connect: {}", ec.message()));
    }
    if (tcp_) tcp_->set_option(tcp::no_delay(true), ec);
    send();
  }

  void send() {
    buffer_.clear();
    parser_.emplace();
    // Not boost::none: Boost 1.74 compares a Content-Length against none as
    // if it were 0 (every sized body fails).
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    parser_->header_limit(64 << 10);
    pending_ = true;
    set_deadline(options().request_timeout);
    with_socket([&](auto& s) {
      bhttp::async_write(s, request_, [self = shared_from_this()](error_code ec, std::size_t) {
        self->pending_ = false;
        self->on_sent(ec);
      });
    });
  }

  void on_sent(error_code ec) {
    if (cancelled_) return finish({End::kStopped, ErrorCode::kIo, {}});
    if (ec) return retry_or_fail("sending failed", ec);
    pending_ = true;
    set_deadline(options().request_timeout);
    with_socket([&](auto& s) {
      bhttp::async_read_header(s, buffer_, *parser_,
                               [self = shared_from_this()](error_code read_ec, std::size_t) {
                                 self->pending_ = false;
                                 self->on_head(read_ec);
                               });
    });
  }

  // The server may have closed a pooled connection while it was idle: once
  // more on a new one, if nothing of an answer had arrived.
  void retry_or_fail(const char* what, error_code ec) {
    if (reused_ && !retried_ && !timed_out_ && !parser_->got_some()) {
      retried_ = true;
      close_socket();
      return connect();
    }
    fail(timed_out_ ? ErrorCode::kTimeout : ErrorCode::kIo,
         fmt::format("{}: {}", what, timed_out_ ? std::string("timed out") : ec.message()));
  }

  void on_head(error_code ec) {
    if (cancelled_) return finish({End::kStopped, ErrorCode::kIo, {}});
    if (ec) return retry_or_fail("reading the answer failed", ec);
    ResponseHead head;
    head.status = static_cast<int>(parser_->get().result_int());
    for (const auto& f : parser_->get()) {
      head.headers.add(std::string(f.name_string()), std::string(f.value()));
    }
    if (!handlers_.on_head(head) || cancelled_) return finish({End::kStopped, ErrorCode::kIo, {}});
    if (parser_->is_done()) return complete();  // a body-less answer
    read_body();
  }

  void read_body() {
    if (paused_ || done_) return;
    parser_->get().body().data = chunk_.data();
    parser_->get().body().size = chunk_.size();
    pending_ = true;
    set_deadline(options().request_timeout);
    with_socket([&](auto& s) {
      bhttp::async_read_some(s, buffer_, *parser_,
                             [self = shared_from_this()](error_code ec, std::size_t) {
                               self->pending_ = false;
                               self->on_body(ec);
                             });
    });
  }

  void on_body(error_code ec) {
    if (ec == bhttp::error::need_buffer) ec = {};
    const std::size_t n = chunk_.size() - parser_->get().body().size;
    if (cancelled_) return finish({End::kStopped, ErrorCode::kIo, {}});
    if (n > 0 && (!handlers_.on_body(std::string_view(chunk_.data(), n)) || cancelled_)) {
      return finish({End::kStopped, ErrorCode::kIo, {}});
    }
    if (ec == bhttp::error::end_of_stream || ec == asio::error::eof) {
      return finish({End::kComplete, ErrorCode::kIo, {}});  // a close-delimited body
    }
    if (ec) {
      return fail(timed_out_ ? ErrorCode::kTimeout : ErrorCode::kIo,
                  timed_out_ ? std::string("timed out") : ec.message());
    }
    if (parser_->is_done()) return complete();
    read_body();  // returns at once when on_body paused
  }

  void on_cancel() {
    if (done_) return;
    cancelled_ = true;
    // A pending operation completes with an error and sees cancelled_.
    if (pending_) return close_socket();
    finish({End::kStopped, ErrorCode::kIo, {}});
  }

  void complete() {
    const bool keep = parser_->get().keep_alive() && buffer_.size() == 0;
    finish({End::kComplete, ErrorCode::kIo, {}}, keep);
  }

  void fail(ErrorCode code, const std::string& what) {
    finish({End::kFailed, code,
            fmt::format("{} {} on {}: {}", method_name(method_), path_, target().where(), what)});
  }

  void finish(AsyncOutcome outcome, bool keep = false) {
    if (done_) return;
    done_ = true;
    ++watch_generation_;
    timer_.cancel();
    error_code ec;
    if (keep && tcp_) {
      const bool v6 = tcp_->local_endpoint(ec).address().is_v6();
      const int fd = ec ? -1 : tcp_->release(ec);
      if (!ec && fd >= 0) shared_->put({fd, v6});
    } else if (keep && unix_) {
      const int fd = unix_->release(ec);
      if (!ec) shared_->put({fd, false});
    }
    close_socket();
    // Dropping the handlers last breaks the cycle through what they capture.
    AsyncHandlers handlers = std::move(handlers_);
    handlers_ = {};
    const auto keep_alive_until_return = std::move(hold_);
    if (handlers.on_done) handlers.on_done(outcome);
  }

  const std::shared_ptr<AsyncClient::Shared> shared_;
  const asio::any_io_executor ex_;
  const Method method_;
  const std::string path_;
  bhttp::request<bhttp::string_body> request_;
  AsyncHandlers handlers_;
  std::optional<tcp::socket> tcp_;
  std::optional<local::socket> unix_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::response_parser<bhttp::buffer_body>> parser_;
  std::array<char, 8192> chunk_;
  asio::steady_timer timer_;
  steady::time_point deadline_;
  steady::time_point watch_until_;
  std::uint64_t watch_generation_ = 0;
  bool watching_ = false;
  bool timed_out_ = false;
  bool pending_ = false;  // an asynchronous operation is in progress
  bool paused_ = false;
  bool cancelled_ = false;
  bool reused_ = false;
  bool retried_ = false;
  bool done_ = false;
  std::shared_ptr<Call> hold_;  // itself, while paused
};

}  // namespace

AsyncClient::AsyncClient(std::string_view base_url, ClientOptions options,
                         std::size_t max_idle_connections)
    : shared_(std::make_shared<Shared>(base_url, options, max_idle_connections)) {}

AsyncClient::~AsyncClient() = default;

std::shared_ptr<AsyncCall> AsyncClient::stream(const Executor& executor, Method method,
                                               std::string target, std::string body,
                                               const Headers& headers, AsyncHandlers handlers) {
  if (!executor.valid()) {
    throw_error(ErrorCode::kInvalidArgument, "AsyncClient::stream needs an executor");
  }
  auto request = detail::build_request(shared_->target, method, target, body, headers);
  auto call = std::make_shared<Call>(shared_, executor.impl().executor, method, std::move(target),
                                     std::move(request), std::move(handlers));
  call->start();
  return call;
}

std::size_t AsyncClient::idle_connections() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->idle.size();
}

}  // namespace zeus::http
