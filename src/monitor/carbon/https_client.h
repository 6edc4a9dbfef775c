// A blocking HTTPS GET for the provider clients, on libcurl (the real APIs
// are HTTPS; the project's own HTTP client speaks plain HTTP only). Bounded
// in time and size; errors are zeus::Error with what went wrong and where.
// Thread-safe: each call uses its own curl handle.
#pragma once

#include <string>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::carbon_internal {

struct HttpsResponse {
  long status = 0;
  std::string body;
};

// kInvalidArgument for a malformed URL, kTimeout when `timeout` passes,
// kIo for a connection, TLS or transfer failure or a body over `max_bytes`.
// HTTP error statuses are returned, not thrown.
HttpsResponse https_get(const std::string& url, const std::vector<std::string>& headers,
                        Seconds timeout, std::size_t max_bytes = 8u << 20);

// Percent-encodes a query value.
std::string query_escape(const std::string& value);

}  // namespace zeus::carbon_internal
