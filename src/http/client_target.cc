#include "client_target.h"

#include <fmt/format.h>

#include <charconv>

#include "zeus/util/error.h"

namespace zeus::http::detail {

namespace bhttp = boost::beast::http;

namespace {

bhttp::verb verb_for(Method m) {
  switch (m) {
    case Method::kGet:
      return bhttp::verb::get;
    case Method::kHead:
      return bhttp::verb::head;
    case Method::kPost:
      return bhttp::verb::post;
    case Method::kPut:
      return bhttp::verb::put;
    case Method::kPatch:
      return bhttp::verb::patch;
    case Method::kDelete:
      return bhttp::verb::delete_;
    case Method::kOptions:
      return bhttp::verb::options;
    case Method::kOther:
      break;
  }
  throw_error(ErrorCode::kInvalidArgument, "the HTTP client cannot send this method");
}

}  // namespace

Target parse_base_url(std::string_view url) {
  Target t;
  auto bad = [&](const char* why) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("'{}' is not a server URL ({}); use http://HOST:PORT or "
                            "unix:/path/to/socket",
                            url, why));
  };
  if (url.starts_with("unix:")) {
    std::string_view rest = url.substr(5);
    if (rest.starts_with("//")) rest = rest.substr(2);
    if (rest.empty() || rest.front() != '/') bad("the socket path must be absolute");
    t.is_unix = true;
    t.path = std::string(rest);
    return t;
  }
  if (!url.starts_with("http://")) bad("only http:// and unix: are supported");
  std::string_view rest = url.substr(7);
  const auto slash = rest.find('/');
  if (slash != std::string_view::npos) {
    t.prefix = std::string(rest.substr(slash));
    while (!t.prefix.empty() && t.prefix.back() == '/') t.prefix.pop_back();
    rest = rest.substr(0, slash);
  }
  if (rest.starts_with("[")) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) bad("unclosed '['");
    t.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') bad("junk after the IPv6 address");
    t.port = rest.empty() ? "80" : std::string(rest.substr(1));
  } else {
    const auto colon = rest.rfind(':');
    t.host = std::string(rest.substr(0, colon));
    t.port = colon == std::string_view::npos ? "80" : std::string(rest.substr(colon + 1));
  }
  int port = 0;
  const auto [p, ec] = std::from_chars(t.port.data(), t.port.data() + t.port.size(), port);
  if (t.host.empty()) bad("no host");
  if (ec != std::errc() || p != t.port.data() + t.port.size() || port <= 0 || port > 65535) {
    bad("bad port");
  }
  return t;
}

bhttp::request<bhttp::string_body> build_request(const Target& target, Method method,
                                                 std::string_view path, std::string_view body,
                                                 const Headers& headers) {
  bhttp::request<bhttp::string_body> req{verb_for(method), target.prefix + std::string(path), 11};
  req.set(bhttp::field::host, target.is_unix ? std::string("localhost") : target.host);
  req.set(bhttp::field::user_agent, "zeus-cpp");
  for (const auto& [k, v] : headers.fields()) req.set(k, v);
  if (!body.empty() && !headers.get("Content-Type")) {
    req.set(bhttp::field::content_type, "application/json");
  }
  req.body() = std::string(body);
  req.keep_alive(true);
  req.prepare_payload();
  return req;
}

}  // namespace zeus::http::detail
