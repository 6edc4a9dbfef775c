// A small blocking HTTP/1.1 client for the project's service clients (the
// batch-size optimizer client, Perseus and zeusd clients) and tests: one
// keep-alive connection over TCP or a Unix-domain socket, with timeouts.
// Not thread-safe: one thread per Client.
#pragma once

#include <functional>
#include <memory>
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

  // Drops the connection (the next request opens a new one).
  void close();
  const std::string& base_url() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zeus::http
