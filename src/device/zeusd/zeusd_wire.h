// The HTTP/1.1 client the library talks to zeusd with (ZeusdConnection): one
// blocking keep-alive connection over a Unix-domain socket or TCP, because
// the daemon binds a lease to the connection that took it. It needs nothing
// beyond POSIX sockets, so every build reaches zeusd, the minimal one and
// pip's included. Answers framed by Content-Length, chunked, or the end of
// the connection; header and body sizes are bounded and every exchange has a
// deadline, so a hostile or hung daemon gives a clear error in bounded time.
// Not thread-safe (ZeusdConnection serializes its requests).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device/zeusd/zeusd_socket.h"
#include "zeus/util/units.h"

namespace zeus::device_internal {

struct WireOptions {
  Seconds connect_timeout{5.0};
  Seconds request_timeout{60.0};  // send the request and read the whole answer
  std::size_t max_header_bytes = 64 << 10;
  std::size_t max_body_bytes = 64 << 20;
};

struct WireResponse {
  int status = 0;
  std::string body;
};

using WireHeaders = std::vector<std::pair<std::string, std::string>>;

class WireClient {
 public:
  // "unix:/path/to.sock" (also "unix:///path") or "http://host:port[/prefix]"
  // (a name, IPv4, or [IPv6]); kInvalidArgument otherwise.
  explicit WireClient(std::string_view url, WireOptions options = {});

  // Sends `method target` (no body) with `headers` and reads the answer.
  // Transport failures are zeus::Error naming the request and the endpoint:
  // kTimeout past a deadline, kIo otherwise (refused, reset, a malformed or
  // oversize answer). A request that fails on a reused connection before any
  // of its answer arrived (the daemon had closed it while idle) is sent once
  // more on a new connection.
  WireResponse request(std::string_view method, std::string_view target,
                       const WireHeaders& headers = {});

  // Drops the connection; the next request opens a new one.
  void close() { socket_.close(); }
  // "unix:/path" or "host:port", for messages.
  std::string where() const;

 private:
  WireResponse exchange(const std::string& request_text, bool& got_some);

  WireOptions options_;
  bool is_unix_ = false;
  std::string path_;  // Unix socket
  std::string host_;  // TCP
  std::string port_;
  std::string host_field_;  // the Host field: the URL's host[:port]
  std::string prefix_;      // before every target
  Seconds limit_{0.0};      // the timeout of the step in progress, for messages
  WireSocket socket_;
};

}  // namespace zeus::device_internal
