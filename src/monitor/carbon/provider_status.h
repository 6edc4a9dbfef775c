// Turns a provider API's HTTP status into a zeus::Error that names the
// provider, the status, the provider's own message and what to do.
#pragma once

#include <string>

namespace zeus::carbon_internal {

// Returns for 2xx; throws otherwise: 401/403 kNoPermission (with auth_hint),
// 404 kNotFound (with not_found_hint), 400/422 kInvalidArgument, 429
// kFailedPrecondition (rate limited), 5xx kIo (provider unavailable), others
// kUnknown.
void check_provider_status(const std::string& provider, long status, const std::string& body,
                           const std::string& auth_hint, const std::string& not_found_hint);

}  // namespace zeus::carbon_internal
