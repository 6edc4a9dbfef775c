// Minimal leveled logging to stderr. The level comes from ZEUS_LOG_LEVEL
// (debug, info, warn, error, off; default info) and can be set in code.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace zeus::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

Level level();
void set_level(Level level);
void write(Level level, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kDebug) write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kInfo) write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kWarn) write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::kError) write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace zeus::log
