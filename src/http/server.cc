// The HTTP server on Boost.Asio + Boost.Beast. One Session per connection
// runs on its own strand; handlers run on the I/O threads and may answer
// later from any thread through the Responder, which posts back onto the
// session's strand.
#include "http/server.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <utility>

#include "beast.h"
#include "executor_impl.h"
#include "http/connection.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::http {

namespace {
std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }
std::string str(beast::string_view s) { return {s.data(), s.size()}; }
}  // namespace

namespace {

// Lets handles that outlive the server (a Responder kept by a handler) find
// out that its I/O context is gone; they take the mutex while touching a session.
struct Gate {
  std::mutex mutex;
  bool open = true;
};

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void post_shutdown() = 0;
  virtual void post_force_close() = 0;
};

std::string endpoint_text(const tcp::socket& s) {
  error_code ec;
  const auto ep = s.remote_endpoint(ec);
  if (ec) return "tcp";
  return fmt::format("{}:{}", ep.address().to_string(), ep.port());
}
std::string endpoint_text(const local::socket&) { return "unix"; }

std::optional<PeerCredentials> peer_of(tcp::socket&) { return std::nullopt; }
std::optional<PeerCredentials> peer_of(local::socket& s) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(s.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return std::nullopt;
  }
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

std::uint64_t next_connection_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

class Server::Impl {
 public:
  Impl(Router r, ServerOptions o)
      : router(std::move(r)),
        options(std::move(o)),
        ioc(std::max(1, options.threads)),
        work(asio::make_work_guard(ioc)),
        gate(std::make_shared<Gate>()) {}

  void session_opened(const std::shared_ptr<SessionBase>& s) {
    std::lock_guard lock(mutex);
    sessions.emplace(s.get(), s);
  }
  void session_closed(SessionBase* s) {
    std::lock_guard lock(mutex);
    sessions.erase(s);
    cv.notify_all();
  }
  std::vector<std::shared_ptr<SessionBase>> live_sessions() {
    std::vector<std::shared_ptr<SessionBase>> out;
    std::lock_guard lock(mutex);
    for (auto& [p, w] : sessions) {
      if (auto s = w.lock()) out.push_back(std::move(s));
    }
    return out;
  }
  bool stopping() const { return stopping_flag.load(std::memory_order_acquire); }

  template <class Protocol>
  void accept(typename Protocol::acceptor& acceptor);

  // Declared before the I/O context: sessions destroyed with it still use them.
  Router router;
  ServerOptions options;
  mutable std::mutex mutex;  // guards sessions and the state flags below
  std::condition_variable cv;
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions;
  bool started = false;
  bool shutting_down = false;
  bool stopped = false;
  std::atomic<bool> stopping_flag{false};

  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  std::shared_ptr<Gate> gate;
  std::vector<std::unique_ptr<tcp::acceptor>> tcp_acceptors;
  std::vector<std::unique_ptr<local::acceptor>> unix_acceptors;
  // The socket files this server created, with their identity: at shutdown
  // only a file that is still ours is removed (not a newer server's socket,
  // nor a file someone put there since).
  struct OwnSocket {
    std::string path;
    dev_t device;
    ino_t inode;
  };
  std::vector<OwnSocket> unix_sockets;
  std::vector<std::thread> threads;
};

namespace {

template <class Protocol>
class Session;

// The Responder's side of one request.
template <class Protocol>
class SessionExchange final : public detail::Exchange {
 public:
  SessionExchange(std::weak_ptr<Session<Protocol>> s, std::shared_ptr<Gate> g,
                  asio::any_io_executor ex)
      : session_(std::move(s)), gate_(std::move(g)), executor_(std::move(ex)) {}
  ~SessionExchange() override {
    if (!answered_.exchange(true)) {
      deliver(Response::error(500, "the server dropped this request without an answer"));
    }
  }
  void send(Response response) override {
    if (answered_.exchange(true)) return;
    deliver(std::move(response));
  }
  std::shared_ptr<detail::EventSink> start_events(Headers headers) override;
  Executor executor() const override {
    return Executor(std::make_shared<const Executor::Impl>(Executor::Impl{executor_}));
  }

 private:
  void deliver(Response response);
  std::weak_ptr<Session<Protocol>> session_;
  std::shared_ptr<Gate> gate_;
  const asio::any_io_executor executor_;  // the connection's strand
  std::atomic<bool> answered_{false};
};

// The EventStream's side of one SSE connection.
template <class Protocol>
class SessionEventSink final : public detail::EventSink {
 public:
  SessionEventSink(std::weak_ptr<Session<Protocol>> s, std::shared_ptr<Gate> g)
      : session_(std::move(s)), gate_(std::move(g)) {}
  bool write(std::string frame) override;
  void close() override;
  bool is_open() const override {
    std::lock_guard lock(mutex_);
    return open_;
  }
  void on_close(std::function<void()> callback) override {
    {
      std::lock_guard lock(mutex_);
      if (open_) {
        callbacks_.push_back(std::move(callback));
        return;
      }
    }
    if (callback) callback();
  }
  bool when_drained(std::size_t below, std::function<void()> callback) override {
    std::lock_guard lock(mutex_);
    if (!open_ || queued_ < below) return true;
    drain_waiters_.push_back({below, std::move(callback)});
    return false;
  }
  // Called by the session (on its strand) when the stream ends.
  void mark_closed() {
    std::vector<std::function<void()>> cbs;
    {
      std::lock_guard lock(mutex_);
      if (!open_) return;
      open_ = false;
      cbs.swap(callbacks_);
      for (auto& w : drain_waiters_) cbs.push_back(std::move(w.callback));
      drain_waiters_.clear();
    }
    for (auto& cb : cbs) {
      if (cb) cb();
    }
  }
  // Bytes on their way to the client: counted when written to the sink (so a
  // writer on any thread sees its own), uncounted when the socket took them.
  void queued(std::size_t n) {
    std::lock_guard lock(mutex_);
    queued_ += n;
  }
  void written(std::size_t n) {
    std::vector<std::function<void()>> ready;
    {
      std::lock_guard lock(mutex_);
      queued_ -= n;
      if (drain_waiters_.empty()) return;
      std::erase_if(drain_waiters_, [&](DrainWaiter& w) {
        if (queued_ >= w.below) return false;
        ready.push_back(std::move(w.callback));
        return true;
      });
    }
    for (auto& cb : ready) {
      if (cb) cb();
    }
  }

 private:
  struct DrainWaiter {
    std::size_t below;
    std::function<void()> callback;
  };
  std::weak_ptr<Session<Protocol>> session_;
  std::shared_ptr<Gate> gate_;
  mutable std::mutex mutex_;  // guards open_, callbacks_, queued_ and drain_waiters_
  bool open_ = true;
  std::vector<std::function<void()>> callbacks_;
  std::size_t queued_ = 0;
  std::vector<DrainWaiter> drain_waiters_;
};

// One connection. Every member runs on the socket's strand.
template <class Protocol>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<Protocol>> {
 public:
  using Socket = typename Protocol::socket;

  Session(Server::Impl& server, Socket socket)
      : server_(server),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        remote_(endpoint_text(socket_)),
        connection_(std::make_shared<Connection>(next_connection_id(), peer_of(socket_))) {
    auto ex = socket_.get_executor();
    if (const auto* strand = ex.template target<Strand>()) strand_.emplace(*strand);
  }
  ~Session() override {
    connection_->mark_closed();
    server_.session_closed(this);
  }

  void start() {
    server_.session_opened(this->shared_from_this());
    wait_for_request();
  }

  void post_shutdown() override {
    asio::post(socket_.get_executor(), [self = this->shared_from_this()] { self->on_shutdown(); });
  }
  void post_force_close() override {
    asio::post(socket_.get_executor(), [self = this->shared_from_this()] { self->close(); });
  }
  void post_response(Response r) {
    asio::post(socket_.get_executor(),
               [self = this->shared_from_this(), r = std::move(r)]() mutable {
                 self->write_response(std::move(r));
               });
  }
  void post_start_events(std::shared_ptr<SessionEventSink<Protocol>> sink, Headers h) {
    asio::post(socket_.get_executor(),
               [self = this->shared_from_this(), sink = std::move(sink),
                h = std::move(h)]() mutable { self->start_events(std::move(sink), std::move(h)); });
  }
  // `sink` names the stream a frame or close belongs to: a keep-alive
  // connection serves one stream after another, and what a writer queued
  // for an ended stream must not reach the next.
  void post_event(const detail::EventSink* sink, std::string frame) {
    asio::post(socket_.get_executor(),
               [self = this->shared_from_this(), sink, f = std::move(frame)]() mutable {
                 self->queue_event(sink, std::move(f));
               });
  }
  // Whether the caller runs on this connection's strand, where start_events()
  // and queue_event() may be called directly (no hop through the queue).
  bool on_strand() const { return strand_ && strand_->running_in_this_thread(); }
  void start_events_here(std::shared_ptr<SessionEventSink<Protocol>> sink, Headers h) {
    start_events(std::move(sink), std::move(h));
  }
  void queue_event_here(const detail::EventSink* sink, std::string frame) {
    queue_event(sink, std::move(frame));
  }
  void post_close_events(const detail::EventSink* sink) {
    asio::post(socket_.get_executor(), [self = this->shared_from_this(), sink] {
      if (self->phase_ != Phase::kStreaming || self->sink_.get() != sink) return;
      self->end_after_flush_ = true;
      if (!self->writing_) self->end_stream();
    });
  }

 private:
  enum class Phase { kIdle, kReading, kHandling, kWriting, kStreaming, kClosed };

  const ServerOptions& options() const { return server_.options; }

  void arm_timer(Seconds d) {
    const auto gen = ++timer_generation_;
    timed_out_ = false;
    timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(d));
    timer_.async_wait([self = this->shared_from_this(), gen](error_code ec) {
      if (ec || gen != self->timer_generation_) return;
      self->timed_out_ = true;
      error_code ignored;
      self->socket_.cancel(ignored);
    });
  }
  void disarm_timer() {
    ++timer_generation_;
    timer_.cancel();
  }

  void wait_for_request() {
    if (shutting_down_) return close();
    if (buffer_.size() > 0) return read_request();
    enter_idle();
    read_more();
  }

  void enter_idle() {
    phase_ = Phase::kIdle;
    if (connection_->held_open()) {
      disarm_timer();
    } else {
      arm_timer(options().idle_timeout);
    }
  }

  // One read into buffer_: the wait for the next request while idle, or,
  // while an event stream is written, the watch that tells that its client
  // left (and holds the session meanwhile). What a client sends before its
  // stream ends (its next requests, pipelined) is kept in buffer_ for after
  // the stream, up to kMaxPipelined; past that the watch stops, the session
  // holds itself, and a client that leaves is noticed by a write. A watch
  // still pending when the stream ends becomes the idle wait, or is
  // cancelled when buffer_ already holds the next request.
  static constexpr std::size_t kMaxPipelined = 64 << 10;

  void read_more() {
    reading_ = true;
    socket_.async_read_some(buffer_.prepare(8192),
                            [self = this->shared_from_this()](error_code ec, std::size_t n) {
                              self->reading_ = false;
                              // While streaming the timer belongs to the event writes.
                              if (self->phase_ != Phase::kStreaming) self->disarm_timer();
                              if (self->phase_ == Phase::kClosed) return;
                              if (std::exchange(self->resume_after_cancel_, false)) {
                                if (ec && ec != asio::error::operation_aborted)
                                  return self->close();
                                if (!ec) self->buffer_.commit(n);
                                return self->wait_for_request();
                              }
                              if (ec) return self->close();
                              self->buffer_.commit(n);
                              if (self->phase_ == Phase::kStreaming) return self->watch_client();
                              self->read_request();
                            });
  }

  void watch_client() {
    if (buffer_.size() < kMaxPipelined) return read_more();
    self_ = this->shared_from_this();  // released when the stream ends or the session closes
  }

  void read_request() {
    phase_ = Phase::kReading;
    parser_.emplace();
    parser_->body_limit(options().max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(options().max_header_bytes));
    arm_timer(options().request_timeout);
    bhttp::async_read(socket_, buffer_, *parser_,
                      [self = this->shared_from_this()](error_code ec, std::size_t) {
                        self->disarm_timer();
                        self->on_read(ec);
                      });
  }

  void on_read(error_code ec) {
    if (phase_ == Phase::kClosed) return;
    if (ec) {
      if (timed_out_) {
        return reject(408, fmt::format("the request did not arrive completely within {:g} s",
                                       options().request_timeout.count()));
      }
      if (ec == bhttp::error::body_limit) {
        return reject(413, fmt::format("the request body is larger than the limit of {} bytes",
                                       options().max_body_bytes));
      }
      if (ec == bhttp::error::header_limit) {
        return reject(431, fmt::format("the request head is larger than the limit of {} bytes",
                                       options().max_header_bytes));
      }
      if (ec.category() == bhttp::make_error_code(bhttp::error::end_of_stream).category() &&
          ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
        return reject(400, fmt::format("malformed HTTP request: {}", ec.message()));
      }
      return close();
    }
    auto& msg = parser_->get();
    Request request;
    request.method = parse_method(sv(msg.method_string()));
    request.target = str(msg.target());
    try {
      split_target(request.target, request.path, request.query);
    } catch (const Error& e) {
      return reject(400, e.what());
    }
    for (const auto& f : msg) {
      request.headers.add(str(f.name_string()), str(f.value()));
    }
    request.body = std::move(msg.body());
    request.remote = remote_;
    request.connection = connection_;
    keep_alive_ = msg.keep_alive();
    version_ = msg.version();
    log_method_ = request.method;
    log_target_ = request.target;
    log_request_bytes_ = request.body.size();
    started_ = std::chrono::steady_clock::now();
    parser_.reset();
    phase_ = Phase::kHandling;
    self_ = this->shared_from_this();  // alive while a handler holds only a weak Responder
    auto exchange = std::make_shared<SessionExchange<Protocol>>(
        this->weak_from_this(), server_.gate, socket_.get_executor());
    server_.router.dispatch(std::move(request), Responder(std::move(exchange)));
  }

  // An error before any handler ran: answer and close the connection.
  void reject(int status, const std::string& message) {
    keep_alive_ = false;
    version_ = 11;
    log_method_ = Method::kOther;
    log_target_.clear();
    log_request_bytes_ = 0;
    started_ = std::chrono::steady_clock::now();
    phase_ = Phase::kHandling;
    write_response(Response::error(status, message));
  }

  void write_response(Response r) {
    if (phase_ != Phase::kHandling) return;
    self_.reset();
    phase_ = Phase::kWriting;
    response_ = std::make_unique<bhttp::response<bhttp::string_body>>();
    auto& res = *response_;
    res.version(version_);
    res.result(static_cast<unsigned>(r.status));
    for (const auto& [k, v] : r.headers.fields()) res.insert(k, v);
    const bool keep = keep_alive_ && !shutting_down_;
    res.keep_alive(keep);
    res.body() = std::move(r.body);
    res.prepare_payload();
    log_status_ = r.status;
    arm_timer(options().response_timeout);
    bhttp::async_write(socket_, res,
                       [self = this->shared_from_this(), keep](error_code ec, std::size_t) {
                         self->disarm_timer();
                         self->log_access(self->response_->body().size());
                         self->response_.reset();
                         if (ec) return self->close();
                         if (keep && !self->shutting_down_) return self->wait_for_request();
                         self->linger_close();
                       });
  }

  void log_access(std::size_t response_bytes) {
    if (!options().access_log) return;
    AccessLogEntry e;
    e.method = log_method_;
    e.target = log_target_;
    e.status = log_status_;
    e.request_bytes = log_request_bytes_;
    e.response_bytes = response_bytes;
    e.duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_);
    e.remote = remote_;
    try {
      options().access_log(e);
    } catch (...) {
      // A failing log hook must not take the connection down.
    }
  }

  // Half-closes, then drains what the client still sends (a rejected body)
  // for a moment, so it reads our answer instead of a connection reset.
  void linger_close() {
    error_code ignored;
    socket_.shutdown(Socket::shutdown_send, ignored);
    phase_ = Phase::kIdle;
    lingered_ = 0;
    arm_timer(Seconds(1.0));
    drain();
  }
  void drain() {
    socket_.async_read_some(asio::buffer(drain_buffer_),
                            [self = this->shared_from_this()](error_code ec, std::size_t n) {
                              self->lingered_ += n;
                              if (ec || self->lingered_ > (4u << 20)) {
                                self->disarm_timer();
                                return self->close();
                              }
                              self->drain();
                            });
  }

  void start_events(std::shared_ptr<SessionEventSink<Protocol>> sink, Headers headers) {
    if (phase_ != Phase::kHandling) {
      sink->mark_closed();
      return;
    }
    self_.reset();
    if (shutting_down_) {
      sink->mark_closed();
      phase_ = Phase::kHandling;
      return write_response(Response::error(503, "the server is shutting down"));
    }
    phase_ = Phase::kStreaming;
    sink_ = std::move(sink);
    // HTTP/1.1: a chunked body, so the stream's end is marked and the
    // connection serves the client's next request (an OpenAI client sends
    // its streams one after another on one connection). HTTP/1.0: the body
    // ends with the connection.
    chunked_ = version_ >= 11;
    keep_after_stream_ = chunked_ && keep_alive_ && !shutting_down_;
    std::string head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n";
    head += chunked_ ? "Transfer-Encoding: chunked\r\n" : "";
    head += keep_after_stream_ ? "" : "Connection: close\r\n";
    for (const auto& [k, v] : headers.fields()) head += k + ": " + v + "\r\n";
    head += "\r\n";
    sink_->queued(head.size());
    log_status_ = 200;
    log_access(0);
    backlog_ += head.size();
    push_out(std::move(head), false);
    if (!reading_) watch_client();
  }

  void queue_event(const detail::EventSink* sink, std::string frame) {
    if (phase_ != Phase::kStreaming || sink_.get() != sink || end_after_flush_) return;
    if (backlog_ + frame.size() > options().max_event_backlog) {
      log::warn("http: dropping an event-stream client ({}) that is {} bytes behind", remote_,
                backlog_);
      return close();
    }
    backlog_ += frame.size();
    push_out(std::move(frame), chunked_);
  }

  void push_out(std::string bytes, bool as_chunk) {
    outbox_.push_back({std::move(bytes), as_chunk});
    if (!writing_) write_next_event();
  }

  // The stream's end: what was queued has been written. A chunked body gets
  // its last chunk; then the connection waits for the client's next request
  // or closes.
  void end_stream() {
    if (!chunked_) return close();
    writing_ = true;
    arm_timer(options().event_write_timeout);
    static constexpr std::string_view kLastChunk = "0\r\n\r\n";
    asio::async_write(socket_, asio::buffer(kLastChunk.data(), kLastChunk.size()),
                      [self = this->shared_from_this()](error_code ec, std::size_t) {
                        self->disarm_timer();
                        self->writing_ = false;
                        if (ec || self->phase_ != Phase::kStreaming) return self->close();
                        self->after_stream();
                      });
  }

  void after_stream() {
    if (!keep_after_stream_ || shutting_down_) return close();
    auto sink = std::move(sink_);
    sink_.reset();
    outbox_.clear();
    backlog_ = 0;
    end_after_flush_ = false;
    chunked_ = false;
    keep_after_stream_ = false;
    if (sink) sink->mark_closed();
    if (phase_ != Phase::kStreaming) return;  // closed by an on_close callback
    self_.reset();
    if (!reading_) return wait_for_request();
    enter_idle();
    if (buffer_.size() == 0) return;  // the pending watch becomes the idle wait
    // The next request is here already: the watch ends, then it is read.
    resume_after_cancel_ = true;
    error_code ignored;
    socket_.cancel(ignored);
  }

  void write_next_event() {
    if (outbox_.empty()) {
      writing_ = false;
      if (end_after_flush_) end_stream();
      return;
    }
    writing_ = true;
    // A client that takes nothing for this long has stopped reading: the
    // timer cancels the write, which closes the stream.
    arm_timer(options().event_write_timeout);
    // One write (writev) of the chunk's size line, the frame and its CRLF.
    // The buffer sequence must outlive the operation: a member.
    const Outgoing& out = outbox_.front();
    std::size_t count = 0;
    if (out.as_chunk) {
      const auto head =
          fmt::format_to_n(chunk_head_.data(), chunk_head_.size(), "{:x}\r\n", out.bytes.size());
      write_buffers_[count++] = asio::buffer(chunk_head_.data(), head.size);
    }
    write_buffers_[count++] = asio::buffer(out.bytes);
    if (out.as_chunk) write_buffers_[count++] = asio::buffer("\r\n", 2);
    asio::async_write(socket_, std::span(write_buffers_.data(), count),
                      [self = this->shared_from_this()](error_code ec, std::size_t) {
                        self->disarm_timer();
                        if (ec || self->phase_ != Phase::kStreaming) {
                          if (self->timed_out_) {
                            log::warn(
                                "http: dropping an event-stream client ({}) that read "
                                "nothing for {:g} s",
                                self->remote_, self->options().event_write_timeout.count());
                          }
                          self->writing_ = false;
                          return self->close();
                        }
                        const std::size_t n = self->outbox_.front().bytes.size();
                        self->backlog_ -= n;
                        self->outbox_.pop_front();
                        if (self->sink_) self->sink_->written(n);
                        self->write_next_event();
                      });
  }

  void on_shutdown() {
    shutting_down_ = true;
    switch (phase_) {
      case Phase::kIdle:
        return close();
      case Phase::kStreaming:  // events already queued still go out
        end_after_flush_ = true;
        if (!writing_) end_stream();
        return;
      case Phase::kReading:
      case Phase::kHandling:
      case Phase::kWriting:
      case Phase::kClosed:
        return;  // the answer goes out with Connection: close
    }
  }

  void close() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    self_.reset();
    disarm_timer();
    error_code ignored;
    socket_.shutdown(Socket::shutdown_both, ignored);
    socket_.close(ignored);
    if (sink_) sink_->mark_closed();
    connection_->mark_closed();
  }

  using Strand = asio::strand<asio::io_context::executor_type>;

  Server::Impl& server_;
  Socket socket_;
  std::optional<Strand> strand_;  // the socket's (set once; read from any thread)
  asio::steady_timer timer_;
  std::uint64_t timer_generation_ = 0;
  bool timed_out_ = false;
  std::string remote_;
  std::shared_ptr<Connection> connection_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::unique_ptr<bhttp::response<bhttp::string_body>> response_;
  std::shared_ptr<Session> self_;
  Phase phase_ = Phase::kIdle;
  bool keep_alive_ = true;
  bool shutting_down_ = false;
  unsigned version_ = 11;
  std::array<char, 4096> drain_buffer_{};
  std::size_t lingered_ = 0;
  bool reading_ = false;  // a read_more() is pending
  bool resume_after_cancel_ = false;
  // Event stream.
  struct Outgoing {
    std::string bytes;
    bool as_chunk;  // framed as one chunk of a chunked body when written
  };
  std::shared_ptr<SessionEventSink<Protocol>> sink_;
  std::deque<Outgoing> outbox_;
  std::size_t backlog_ = 0;
  bool writing_ = false;
  bool end_after_flush_ = false;
  bool chunked_ = false;
  bool keep_after_stream_ = false;
  std::array<char, 24> chunk_head_{};
  std::array<asio::const_buffer, 3> write_buffers_;
  // Access log of the current request.
  Method log_method_ = Method::kOther;
  std::string log_target_;
  std::size_t log_request_bytes_ = 0;
  int log_status_ = 0;
  std::chrono::steady_clock::time_point started_;
};

template <class Protocol>
void SessionExchange<Protocol>::deliver(Response response) {
  std::lock_guard lock(gate_->mutex);
  if (!gate_->open) return;
  if (auto s = session_.lock()) s->post_response(std::move(response));
}

template <class Protocol>
std::shared_ptr<detail::EventSink> SessionExchange<Protocol>::start_events(Headers headers) {
  auto sink = std::make_shared<SessionEventSink<Protocol>>(session_, gate_);
  if (answered_.exchange(true)) {
    sink->mark_closed();
    return sink;
  }
  std::shared_ptr<Session<Protocol>> s;
  {
    std::lock_guard lock(gate_->mutex);
    s = gate_->open ? session_.lock() : nullptr;
    if (s && !s->on_strand()) {
      s->post_start_events(sink, std::move(headers));
      return sink;
    }
  }
  // On the connection's strand (the I/O thread is running, so the gate is
  // open): at once, so that events sent next are not queued before the head.
  if (!s) {
    sink->mark_closed();
  } else {
    s->start_events_here(sink, std::move(headers));
  }
  return sink;
}

template <class Protocol>
bool SessionEventSink<Protocol>::write(std::string frame) {
  if (!is_open()) return false;
  std::shared_ptr<Session<Protocol>> s;
  {
    std::lock_guard lock(gate_->mutex);
    if (!gate_->open) return false;
    s = session_.lock();
    if (!s) return false;
    queued(frame.size());
    if (!s->on_strand()) {
      s->post_event(this, std::move(frame));
      return true;
    }
  }
  // On the connection's strand: written now, from this thread (no hop).
  s->queue_event_here(this, std::move(frame));
  return is_open();
}

template <class Protocol>
void SessionEventSink<Protocol>::close() {
  if (!is_open()) return;
  std::lock_guard lock(gate_->mutex);
  if (!gate_->open) return;
  if (auto s = session_.lock()) s->post_close_events(this);
}

}  // namespace

template <class Protocol>
void Server::Impl::accept(typename Protocol::acceptor& acceptor) {
  acceptor.async_accept(
      asio::make_strand(ioc), [this, &acceptor](error_code ec, typename Protocol::socket socket) {
        if (stopping() || ec == asio::error::operation_aborted) return;
        if (!ec) {
          bool full;
          {
            std::lock_guard lock(mutex);
            full = sessions.size() >= options.max_connections;
          }
          if (full) {
            error_code ignored;
            socket.close(ignored);
          } else {
            if constexpr (std::is_same_v<Protocol, tcp>) {
              error_code ignored;
              socket.set_option(tcp::no_delay(true), ignored);
            }
            std::make_shared<Session<Protocol>>(*this, std::move(socket))->start();
          }
        } else {
          log::warn("http: accept failed: {}", ec.message());
        }
        accept<Protocol>(acceptor);
      });
}

Server::Server(Router router, ServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(router), std::move(options))) {}

Server::~Server() { shutdown(); }

int Server::listen_tcp(const std::string& host, int port) {
  if (port < 0 || port > 65535) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("port {} is out of range", port));
  }
  error_code ec;
  const auto address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("'{}' is not an IP address to listen on", host));
  }
  auto acceptor = std::make_unique<tcp::acceptor>(impl_->ioc);
  const tcp::endpoint ep(address, static_cast<unsigned short>(port));
  acceptor->open(ep.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(ep, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw_error(ErrorCode::kIo,
                fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
  }
  const int bound = acceptor->local_endpoint().port();
  impl_->tcp_acceptors.push_back(std::move(acceptor));
  impl_->accept<tcp>(*impl_->tcp_acceptors.back());
  return bound;
}

void Server::listen_unix(const std::string& path, std::optional<unsigned> mode) {
  namespace fs = std::filesystem;
  std::error_code fec;
  const auto st = fs::symlink_status(path, fec);
  if (!fec && fs::exists(st)) {
    if (!fs::is_socket(st)) {
      throw_error(ErrorCode::kAlreadyExists,
                  fmt::format("{} exists and is not a socket; refusing to replace it", path));
    }
    local::socket probe(impl_->ioc);
    error_code ec;
    probe.connect(local::endpoint(path), ec);
    if (!ec) {
      throw_error(ErrorCode::kAlreadyExists,
                  fmt::format("another server is already listening on {}", path));
    }
    fs::remove(path, fec);  // stale: nobody accepts on it
  }
  // Bound, given its mode and listening under a staging name in the same
  // folder, then renamed into place (the socket stays bound to its inode):
  // whoever sees `path` can connect, and nobody ever could before the mode
  // was set. A path too long for a staging name is bound where it is.
  const std::string staging = fmt::format("{}.{}.staging", path, ::getpid());
  const bool staged = staging.size() < sizeof(sockaddr_un::sun_path);
  const std::string& bound = staged ? staging : path;
  if (staged) fs::remove(staging, fec);  // a crashed start-up's leftover
  auto acceptor = std::make_unique<local::acceptor>(impl_->ioc);
  error_code ec;
  acceptor->open(local(), ec);
  if (!ec) acceptor->bind(local::endpoint(bound), ec);
  if (ec) {
    throw_error(ErrorCode::kIo, fmt::format("cannot listen on {}: {}", path, ec.message()));
  }
  const auto fail = [&](std::string message) {
    if (staged) fs::remove(staging, fec);
    throw_error(ErrorCode::kIo, std::move(message));
  };
  if (mode && ::chmod(bound.c_str(), static_cast<mode_t>(*mode)) != 0) {
    fail(fmt::format("cannot set the mode of {}", path));
  }
  acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) fail(fmt::format("cannot listen on {}: {}", path, ec.message()));
  if (staged) {
    // RENAME_NOREPLACE: a server that took the path meanwhile keeps it. A file
    // system without it (EINVAL) gets a plain rename.
    int rc = ::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
      rc = ::rename(staging.c_str(), path.c_str());
    }
    if (rc != 0) {
      const int err = errno;
      fs::remove(staging, fec);
      if (err == EEXIST) {
        throw_error(ErrorCode::kAlreadyExists,
                    fmt::format("another server is already listening on {}", path));
      }
      throw_error(ErrorCode::kIo, fmt::format("cannot put the socket in place at {}: {}", path,
                                              std::strerror(err)));
    }
  }
  struct stat created {};
  if (::lstat(path.c_str(), &created) != 0) {
    throw_error(ErrorCode::kIo, fmt::format("cannot stat the socket {} just created", path));
  }
  impl_->unix_sockets.push_back({path, created.st_dev, created.st_ino});
  impl_->unix_acceptors.push_back(std::move(acceptor));
  impl_->accept<local>(*impl_->unix_acceptors.back());
}

void Server::start() {
  std::lock_guard lock(impl_->mutex);
  if (impl_->started || impl_->shutting_down) return;
  impl_->started = true;
  for (int i = 0; i < std::max(1, impl_->options.threads); ++i) {
    impl_->threads.emplace_back([this] { impl_->ioc.run(); });
  }
}

void Server::shutdown() {
  Impl& s = *impl_;
  {
    std::unique_lock lock(s.mutex);
    if (s.shutting_down) {
      s.cv.wait(lock, [&] { return s.stopped; });
      return;
    }
    s.shutting_down = true;
  }
  s.stopping_flag.store(true, std::memory_order_release);
  // Stop accepting (on an I/O thread, where the acceptors live).
  auto close_acceptors = [&s] {
    error_code ignored;
    for (auto& a : s.tcp_acceptors) a->close(ignored);
    for (auto& a : s.unix_acceptors) a->close(ignored);
  };
  const bool running = !s.threads.empty();
  if (running) {
    std::promise<void> closed;
    asio::post(s.ioc, [&] {
      close_acceptors();
      closed.set_value();
    });
    closed.get_future().wait();
  } else {
    close_acceptors();
  }
  for (auto& session : s.live_sessions()) session->post_shutdown();
  if (running) {
    std::unique_lock lock(s.mutex);
    const bool drained =
        s.cv.wait_for(lock, s.options.drain_timeout, [&] { return s.sessions.empty(); });
    const std::size_t busy = s.sessions.size();
    lock.unlock();
    if (!drained) {
      log::warn("http: {} connection(s) still busy after {:g} s; closing them", busy,
                s.options.drain_timeout.count());
    }
  }
  for (auto& session : s.live_sessions()) session->post_force_close();
  s.work.reset();
  if (running) {
    std::unique_lock lock(s.mutex);
    s.cv.wait_for(lock, std::chrono::seconds(2), [&] { return s.sessions.empty(); });
  }
  s.ioc.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  {
    std::lock_guard g(s.gate->mutex);
    s.gate->open = false;
  }
  for (const auto& own : s.unix_sockets) {
    struct stat now {};
    if (::lstat(own.path.c_str(), &now) == 0 && now.st_dev == own.device &&
        now.st_ino == own.inode) {
      ::unlink(own.path.c_str());
    } else {
      log::info("{} is no longer this server's socket; left in place", own.path);
    }
  }
  {
    std::lock_guard lock(s.mutex);
    s.stopped = true;
  }
  s.cv.notify_all();
}

void Server::wait() {
  std::unique_lock lock(impl_->mutex);
  impl_->cv.wait(lock, [&] { return impl_->stopped; });
}

std::size_t Server::connections() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->sessions.size();
}

}  // namespace zeus::http
