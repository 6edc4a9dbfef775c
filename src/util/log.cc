#include "zeus/util/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace zeus::log {
namespace {

Level level_from_env() {
  const char* env = std::getenv("ZEUS_LOG_LEVEL");
  if (env == nullptr) return Level::kInfo;
  const std::string value(env);
  if (value == "debug") return Level::kDebug;
  if (value == "warn" || value == "warning") return Level::kWarn;
  if (value == "error") return Level::kError;
  if (value == "off") return Level::kOff;
  return Level::kInfo;
}

std::atomic<Level>& current() {
  static std::atomic<Level> level{level_from_env()};
  return level;
}

const char* prefix(Level level) {
  switch (level) {
    case Level::kDebug:
      return "zeus: debug: ";
    case Level::kInfo:
      return "zeus: ";
    case Level::kWarn:
      return "zeus: warning: ";
    case Level::kError:
      return "zeus: error: ";
    case Level::kOff:
      return "";
  }
  return "";
}

}  // namespace

Level level() { return current().load(std::memory_order_relaxed); }
void set_level(Level level) { current().store(level); }

void write(Level level, std::string_view message) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  std::fprintf(stderr, "%s%.*s\n", prefix(level), static_cast<int>(message.size()), message.data());
}

}  // namespace zeus::log
