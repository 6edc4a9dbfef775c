// A small blocking HTTP/1.1 client for the project's service clients (the
// batch-size optimizer client, Perseus and zeusd clients) and tests: one
// keep-alive connection over TCP or a Unix-domain socket, with timeouts.
// Not thread-safe: one thread per Client.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "zeus/http/message.h"
#include "zeus/util/units.h"

namespace zeus::http {

struct ClientOptions {
  Seconds connect_timeout{5.0};
  Seconds request_timeout{30.0};  // per request: write it and read the whole answer
  std::size_t max_response_bytes = 64 << 20;
};

// One Server-Sent Event as received.
struct Event {
  std::string event;  // "" when the server sent no event: field
  std::string data;   // data: lines joined with '\n'
  std::string id;
};

// The status and header fields of a response whose body is streamed.
struct ResponseHead {
  int status = 0;
  Headers headers;
};

class Client {
 public:
  // `base_url`: "http://host:port" (IPv4, [IPv6] or a name) or
  // "unix:/path/to.sock" (also "unix:///path"). kInvalidArgument otherwise.
  explicit Client(std::string_view base_url, ClientOptions options = {});
  ~Client();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;

  // Sends one request and reads the response. Transport failures throw
  // zeus::Error: kTimeout past a deadline, kIo otherwise (refused, reset,
  // malformed answer). A request that fails on a reused connection the
  // server had already closed is sent once more on a new connection.
  Response request(Method method, std::string_view target, std::string_view body = {},
                   const Headers& headers = {});
  Response get(std::string_view target) { return request(Method::kGet, target); }
  Response post_json(std::string_view target, std::string_view json_body);

  // GETs an event stream and calls `on_event` for each event until it
  // returns false or the server ends the stream. request_timeout applies to
  // the gap between two reads. The connection is not reused afterwards.
  void stream_events(std::string_view target, const std::function<bool(const Event&)>& on_event);

  // Sends one request and hands the response's body to `on_body` piece by
  // piece as it arrives (chunked or close-delimited bodies alike), after
  // `on_head` has seen the status and fields. Either callback returning
  // false, or a stop request on `stop` (from any thread: it aborts a read in
  // progress), ends the exchange early: returns false. True when the body
  // ended. request_timeout applies to the gap between two reads. Transport
  // failures throw as request() does. The connection stays for the next
  // request when the body ended and the server keeps it alive.
  bool stream(Method method, std::string_view target, std::string_view body, const Headers& headers,
              const std::function<bool(const ResponseHead&)>& on_head,
              const std::function<bool(std::string_view)>& on_body, std::stop_token stop = {});

  // Drops the connection (the next request opens a new one).
  void close();
  const std::string& base_url() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::http
