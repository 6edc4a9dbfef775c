// The project's HTTP/1.1 server: TCP and Unix-domain listeners, keep-alive,
// request size and time limits, JSON error bodies, asynchronous completion,
// Server-Sent Events, a per-request log hook and graceful shutdown. Every
// service (the batch-size optimizer, zeusd, the Perseus server, metrics)
// serves through it. Boost.Asio/Beast do the work behind a pimpl.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "http/router.h"
#include "zeus/util/units.h"

namespace zeus::http {

// One finished request, for an access log.
struct AccessLogEntry {
  Method method = Method::kGet;
  std::string target;
  int status = 0;
  std::size_t request_bytes = 0;   // body
  std::size_t response_bytes = 0;  // body; 0 for an event stream
  Seconds duration{0};             // request fully read until response written
  std::string remote;
};

struct ServerOptions {
  std::size_t max_body_bytes = 1 << 20;     // larger bodies: 413
  std::size_t max_header_bytes = 16 << 10;  // larger heads: 431
  // A request must arrive completely within this once its first byte has
  // arrived (else 408).
  Seconds request_timeout{10.0};
  // A response must be written within this (else the connection is closed).
  // Apart from request_timeout, so a service whose answers are large or slow
  // to read need not give a client that trickles its request as long.
  Seconds response_timeout{10.0};
  // An event-stream client that has not taken a queued event within this is
  // dropped (on_close runs). A client that reads nothing while its producer
  // waits for it to drain (EventStream::when_drained) never reaches
  // max_event_backlog, so without this bound it would be kept forever.
  Seconds event_write_timeout{60.0};
  Seconds idle_timeout{60.0};   // a keep-alive connection with no request is closed after this
  Seconds drain_timeout{10.0};  // shutdown() waits this long for in-flight requests
  int threads = 1;              // I/O threads; handlers run on them
  std::size_t max_connections = 4096;       // further connections are closed at once
  std::size_t max_event_backlog = 1 << 20;  // bytes queued for a slow SSE client before dropping it
  // Called once per answered request on an I/O thread; keep it cheap.
  std::function<void(const AccessLogEntry&)> access_log;
};

class Server {
 public:
  explicit Server(Router router, ServerOptions options = {});
  ~Server();  // shutdown()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens now, so a busy port fails here (kIo, saying which) and
  // the chosen port is known before serving. Returns the port (port 0 = any).
  int listen_tcp(const std::string& host, int port);
  // Listens on a Unix-domain socket. A stale socket file (nobody accepting)
  // is replaced; a live one or a non-socket file is kAlreadyExists. `mode`
  // is applied to the socket file (e.g. 0660). The file is removed at shutdown.
  void listen_unix(const std::string& path, std::optional<unsigned> mode = std::nullopt);

  // Serves on options.threads background threads; returns at once.
  void start();
  // Graceful: stops accepting, closes idle connections and event streams,
  // lets in-flight requests finish (their responses say Connection: close),
  // then stops the threads. Waits at most drain_timeout for requests whose
  // handlers never answer. Idempotent; call from any thread but a handler's.
  void shutdown();
  // Blocks until shutdown() has completed.
  void wait();
  // Connections currently open (for tests and metrics).
  std::size_t connections() const;

  class Impl;  // opaque; public only so the connection code in server.cc can name it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::http
