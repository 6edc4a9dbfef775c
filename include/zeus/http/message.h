// HTTP/1.1 requests and responses as the project's services and clients see
// them: plain value types with no dependency on the HTTP library underneath
// (Boost.Beast stays inside src/http), so every service and test includes
// these cheaply.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::http {

class Connection;  // src/http/connection.h (internal to the project)

enum class Method { kGet, kHead, kPost, kPut, kPatch, kDelete, kOptions, kOther };
std::string_view method_name(Method method);  // "GET", ...; "OTHER" for kOther
Method parse_method(std::string_view name);   // kOther when unknown

// Header fields in arrival order; names compare case-insensitively.
// Fields that belong to one hop (RFC 9110 7.6.1: Connection, Keep-Alive,
// Transfer-Encoding, TE, Trailer, Upgrade, Proxy-Connection) or that the HTTP
// layer sets for the message it actually sends (Host, Content-Length): a
// proxy forwards none of them.
bool is_per_hop_field(std::string_view name);

class Headers {
 public:
  // Replaces every field named `name`.
  void set(std::string_view name, std::string value);
  void add(std::string name, std::string value);
  std::optional<std::string_view> get(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

struct Request {
  Method method = Method::kGet;
  std::string target;  // as sent: "/jobs/batch_size?job_id=a%20b"
  std::string path;    // percent-decoded path without the query: "/jobs/batch_size"
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  // Captured "{name}" segments of the route's path (see Router), decoded.
  std::vector<std::pair<std::string, std::string>> path_params;
  Headers headers;
  std::string body;
  std::string remote;  // "127.0.0.1:53412", "unix" for a Unix-domain peer
  // The connection it arrived on (null when a test dispatches by hand).
  std::shared_ptr<Connection> connection;

  // The first query parameter named `name`.
  std::optional<std::string_view> query_param(std::string_view name) const;
  // The captured path segment `name`; "" when the route has none by that name.
  std::string_view path_param(std::string_view name) const;
};

struct Response {
  int status = 200;
  Headers headers;
  std::string body;

  // `value` serialized, Content-Type application/json.
  static Response json(int status, const nlohmann::json& value);
  // The project's error body {"message": "..."}.
  static Response error(int status, std::string_view message);
  static Response text(int status, std::string body,
                       std::string_view content_type = "text/plain; charset=utf-8");
};

// Retry-After: the wait rounded up to whole seconds (at least 1).
void add_retry_after(Response& response, Seconds wait);

// The response for an exception escaping a handler: a RetryLater is 429 or
// 503 with Retry-After; another zeus::Error goes through
// zeus::http_status_for() with its message; anything else is a 500 whose
// body does not leak internals.
Response response_for_exception(const std::exception& e);

// "reason phrase" of a status code ("Not Found"); "Unknown" for others.
std::string_view reason_phrase(int status);

// Splits a request target into its decoded path and query. kInvalidArgument
// for a malformed percent-escape or a target that is not origin-form.
void split_target(std::string_view target, std::string& path,
                  std::vector<std::pair<std::string, std::string>>& query);
// Percent-encodes a query component (RFC 3986 unreserved characters pass).
std::string url_encode(std::string_view text);

}  // namespace zeus::http
