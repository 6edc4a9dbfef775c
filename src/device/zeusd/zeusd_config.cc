// What the library needs to know about zeusd without talking to it: where it
// is (the environment) and what a status allows.
#include <algorithm>
#include <cstdlib>

#include "zeus/device/zeusd_backend.h"

namespace zeus::device {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

bool ZeusdStatus::can(const std::string& group) const {
  const bool enabled = std::find(enabled_api_groups.begin(), enabled_api_groups.end(), group) !=
                       enabled_api_groups.end();
  if (!enabled) return false;
  if (!auth_required) return true;
  return std::find(scopes.begin(), scopes.end(), group) != scopes.end();
}

std::optional<ZeusdConfig> ZeusdConfig::from_env() {
  ZeusdConfig c;
  if (const char* t = env("ZEUSD_TOKEN")) c.token = t;
  if (const char* sock = env("ZEUSD_SOCK_PATH")) {
    c.endpoint = sock;
    c.url = std::string("unix:") + sock;
    return c;
  }
  if (const char* hp = env("ZEUSD_HOST_PORT")) {
    c.endpoint = hp;
    c.url = std::string("http://") + hp;
    return c;
  }
  return std::nullopt;
}

}  // namespace zeus::device
