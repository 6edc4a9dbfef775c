// A tiny blocking HTTP/1.1 client over a Unix socket: the SPANK plugin's
// three calls to zeusd. It runs inside slurmstepd, so it needs no Boost and
// no threads, stops at a deadline on every step (connect, send, receive) and
// reads a bounded answer.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace zeus::slurm_internal {

struct HttpReply {
  int status = 0;
  std::string body;
};

// Why a call got no HTTP answer: connect refused, no socket, timeout, an
// answer that is not HTTP or too large.
class HttpFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr std::size_t kMaxReplyBytes = 1 << 20;

// Sends `method target` (no body) with Connection: close and returns the
// answer; throws HttpFailure after `timeout_s` in all or on any failure.
HttpReply http_request(const std::string& socket_path, std::string_view method,
                       std::string_view target, double timeout_s);

// Percent-encodes a query value (unreserved characters and ',' pass).
std::string query_escape(std::string_view value);

}  // namespace zeus::slurm_internal
