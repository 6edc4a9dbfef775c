#include "zeus/http/message.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::http {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%') {
      const int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
      const int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        throw_error(ErrorCode::kInvalidArgument,
                    fmt::format("malformed percent-escape in the request target near '{}'",
                                s.substr(i, 3)));
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string_view method_name(Method method) {
  switch (method) {
    case Method::kGet:
      return "GET";
    case Method::kHead:
      return "HEAD";
    case Method::kPost:
      return "POST";
    case Method::kPut:
      return "PUT";
    case Method::kPatch:
      return "PATCH";
    case Method::kDelete:
      return "DELETE";
    case Method::kOptions:
      return "OPTIONS";
    case Method::kOther:
      break;
  }
  return "OTHER";
}

Method parse_method(std::string_view name) {
  for (Method m : {Method::kGet, Method::kHead, Method::kPost, Method::kPut, Method::kPatch,
                   Method::kDelete, Method::kOptions}) {
    if (method_name(m) == name) return m;
  }
  return Method::kOther;
}

bool is_per_hop_field(std::string_view name) {
  for (std::string_view h : {"connection", "keep-alive", "proxy-connection", "transfer-encoding",
                             "te", "trailer", "upgrade", "host", "content-length"}) {
    if (iequals(name, h)) return true;
  }
  return false;
}

void Headers::set(std::string_view name, std::string value) {
  std::erase_if(fields_, [&](const auto& f) { return iequals(f.first, name); });
  fields_.emplace_back(std::string(name), std::move(value));
}

void Headers::add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

std::optional<std::string_view> Headers::get(std::string_view name) const {
  for (const auto& [k, v] : fields_) {
    if (iequals(k, name)) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<std::string_view> Request::query_param(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return std::string_view(v);
  }
  return std::nullopt;
}

std::string_view Request::path_param(std::string_view name) const {
  for (const auto& [k, v] : path_params) {
    if (k == name) return v;
  }
  return {};
}

Response Response::json(int status, const nlohmann::json& value) {
  Response r;
  r.status = status;
  r.headers.set("Content-Type", "application/json");
  r.body = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

Response Response::error(int status, std::string_view message) {
  return json(status, nlohmann::json{{"message", std::string(message)}});
}

Response Response::text(int status, std::string body, std::string_view content_type) {
  Response r;
  r.status = status;
  r.headers.set("Content-Type", std::string(content_type));
  r.body = std::move(body);
  return r;
}

void add_retry_after(Response& response, Seconds wait) {
  response.headers.set(
      "Retry-After",
      std::to_string(static_cast<long long>(std::ceil(std::max(1.0, wait.count())))));
}

Response response_for_exception(const std::exception& e) {
  if (const auto* r = dynamic_cast<const RetryLater*>(&e)) {
    Response out = Response::error(r->http_status(), r->what());
    add_retry_after(out, r->retry_after());
    return out;
  }
  if (const auto* z = dynamic_cast<const Error*>(&e)) {
    return Response::error(http_status_for(z->code()), z->what());
  }
  return Response::error(500, "internal server error; the server log has the details");
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 429:
      return "Too Many Requests";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

void split_target(std::string_view target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query) {
  if (target.empty() || target.front() != '/') {
    throw_error(ErrorCode::kInvalidArgument, "the request target must start with '/'");
  }
  const auto q = target.find('?');
  path = decode(target.substr(0, q), false);
  query.clear();
  if (q == std::string_view::npos) return;
  std::string_view rest = target.substr(q + 1);
  if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    if (!pair.empty()) {
      const auto eq = pair.find('=');
      query.emplace_back(decode(pair.substr(0, eq), true), eq == std::string_view::npos
                                                               ? std::string()
                                                               : decode(pair.substr(eq + 1), true));
    }
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
}

std::string url_encode(std::string_view text) { return percent_encode(text); }

}  // namespace zeus::http
