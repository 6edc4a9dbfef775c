// The parts of an HTTP client exchange that the blocking Client and the
// AsyncClient share: the parsed base URL and the request they send.
#pragma once

#include <boost/beast/http.hpp>
#include <string>
#include <string_view>

#include "zeus/http/message.h"

namespace zeus::http::detail {

// A parsed base URL.
struct Target {
  bool is_unix = false;
  std::string host;    // TCP
  std::string port;    // TCP
  std::string path;    // Unix socket
  std::string prefix;  // path prefix before every request target

  // "host:port" or "unix:/path", for messages.
  std::string where() const { return is_unix ? "unix:" + path : host + ":" + port; }
};

// "http://host:port[/prefix]" or "unix:/path"; kInvalidArgument otherwise.
Target parse_base_url(std::string_view url);

// The request as sent: Host, User-Agent, the caller's fields, a JSON
// Content-Type for a body without one, keep-alive, the length.
boost::beast::http::request<boost::beast::http::string_body> build_request(const Target& target,
                                                                           Method method,
                                                                           std::string_view path,
                                                                           std::string_view body,
                                                                           const Headers& headers);

}  // namespace zeus::http::detail
