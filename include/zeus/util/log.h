// Leveled logging through one replaceable sink. The level comes from
// ZEUS_LOG_LEVEL (debug, info, warn, error, off; default info) and can be set
// in code. Messages go to the process's sink: stderr unless a program or a
// test installs another (a service's structured log, a CapturingSink).
#pragma once

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zeus::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

// "debug", "info", "warn" (or "warning"), "error", "off"; nullopt otherwise.
std::optional<Level> parse_level(std::string_view text);
const char* level_name(Level level);

// Where log lines go. The base class serializes calls, so a sink's write()
// never runs twice at once and holds no locking of its own, and it escapes
// control characters (printable()), so every entry is one line.
class Sink {
 public:
  virtual ~Sink() = default;
  void log(Level level, std::string_view message);

 protected:
  virtual void write(Level level, std::string_view message) = 0;

 private:
  std::mutex mutex_;
};

// "zeus: warning: <message>" lines on stderr. The default sink.
class StderrSink final : public Sink {
 protected:
  void write(Level level, std::string_view message) override;
};

// Keeps every line in memory, for tests that assert what was logged.
class CapturingSink final : public Sink {
 public:
  struct Entry {
    Level level;
    std::string message;
  };
  std::vector<Entry> entries() const;
  // Lines at `level` whose message contains `needle`.
  std::size_t count(Level level, std::string_view needle) const;
  void clear();

 protected:
  void write(Level level, std::string_view message) override;

 private:
  mutable std::mutex entries_mutex_;  // guards entries_ against readers
  std::vector<Entry> entries_;
};

// Installs `sink` for the whole process (nullptr: back to stderr) and returns
// the previous one. Thread-safe; messages in flight finish on the old sink.
std::shared_ptr<Sink> set_sink(std::shared_ptr<Sink> sink);
std::shared_ptr<Sink> sink();

// Installs a sink (and optionally a level) for a scope; puts the previous
// ones back on destruction. For tests.
class ScopedSink {
 public:
  explicit ScopedSink(std::shared_ptr<Sink> sink, std::optional<Level> level = std::nullopt);
  ~ScopedSink();
  ScopedSink(const ScopedSink&) = delete;
  ScopedSink& operator=(const ScopedSink&) = delete;

 private:
  std::shared_ptr<Sink> previous_sink_;
  std::optional<Level> previous_level_;
};

Level level();
void set_level(Level level);
// Sends a message to the sink if `level` is enabled.
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
