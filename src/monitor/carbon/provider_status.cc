#include "monitor/carbon/provider_status.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::carbon_internal {
namespace {

// The provider's own words: a JSON "message"/"error" field, else the body's start.
std::string provider_message(const std::string& body) {
  constexpr std::size_t kMax = 200;
  try {
    const auto j = nlohmann::json::parse(body);
    for (const char* key : {"message", "error", "detail"}) {
      if (j.is_object() && j.contains(key)) {
        const auto& v = j[key];
        const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
        return printable(text.substr(0, kMax));
      }
    }
  } catch (const nlohmann::json::exception&) {
  }
  return printable(body.substr(0, kMax));
}

}  // namespace

void check_provider_status(const std::string& provider, long status, const std::string& body,
                           const std::string& auth_hint, const std::string& not_found_hint) {
  if (status >= 200 && status < 300) return;
  const std::string said = provider_message(body);
  const std::string head =
      fmt::format("{} answered HTTP {}{}", provider, status, said.empty() ? "" : ": " + said);
  if (status == 401 || status == 403) {
    throw_error(ErrorCode::kNoPermission, fmt::format("{}; {}", head, auth_hint));
  }
  if (status == 404) throw_error(ErrorCode::kNotFound, fmt::format("{}; {}", head, not_found_hint));
  if (status == 400 || status == 422) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}; check the location and provider options", head));
  }
  if (status == 429) {
    throw_error(ErrorCode::kFailedPrecondition,
                fmt::format("{}; the API's rate limit was reached, retry later", head));
  }
  if (status >= 500) {
    throw_error(ErrorCode::kIo, fmt::format("{}; the provider is unavailable, retry later", head));
  }
  throw_error(ErrorCode::kUnknown, head);
}

}  // namespace zeus::carbon_internal
