#include "zeus/util/log.h"

#include <algorithm>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "util/text.h"

namespace zeus::log {
namespace {

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

// An unknown value is reported once on stderr (the sink may not exist yet).
Level level_from_env() {
  const char* env = std::getenv("ZEUS_LOG_LEVEL");
  if (env == nullptr || *env == '\0') return Level::kInfo;
  if (const auto parsed = parse_level(env)) return *parsed;
  std::fprintf(stderr,
               "zeus: warning: ZEUS_LOG_LEVEL='%.40s' is not a level (debug, info, warn, error, "
               "off); using info\n",
               env);
  return Level::kInfo;
}

std::atomic<Level>& current_level() {
  static std::atomic<Level> level{level_from_env()};
  return level;
}

struct SinkSlot {
  std::mutex mutex;  // guards sink
  std::shared_ptr<Sink> sink = std::make_shared<StderrSink>();
};

SinkSlot& slot() {
  static auto* s = new SinkSlot;  // never destroyed: logging works during static destruction
  return *s;
}

}  // namespace

std::optional<Level> parse_level(std::string_view text) {
  if (text == "debug") return Level::kDebug;
  if (text == "info") return Level::kInfo;
  if (text == "warn" || text == "warning") return Level::kWarn;
  if (text == "error") return Level::kError;
  if (text == "off") return Level::kOff;
  return std::nullopt;
}

const char* level_name(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
    case Level::kOff:
      return "off";
  }
  return "off";
}

void Sink::log(Level level, std::string_view message) {
  // One entry, one line: control characters from the data a message quotes
  // (a job id, a command's output) are escaped, so a client cannot forge log
  // lines. Most messages have none and are passed on as they are.
  const bool plain = std::none_of(message.begin(), message.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7F;
  });
  const std::string escaped = plain ? std::string() : printable(message, message.size() * 4);
  std::lock_guard lock(mutex_);
  write(level, plain ? message : std::string_view(escaped));
}

void StderrSink::write(Level level, std::string_view message) {
  std::fprintf(stderr, "%s%.*s\n", prefix(level), static_cast<int>(message.size()), message.data());
}

std::vector<CapturingSink::Entry> CapturingSink::entries() const {
  std::lock_guard lock(entries_mutex_);
  return entries_;
}

std::size_t CapturingSink::count(Level level, std::string_view needle) const {
  std::lock_guard lock(entries_mutex_);
  std::size_t n = 0;
  for (const auto& e : entries_) {
    if (e.level == level && e.message.find(needle) != std::string::npos) ++n;
  }
  return n;
}

void CapturingSink::clear() {
  std::lock_guard lock(entries_mutex_);
  entries_.clear();
}

void CapturingSink::write(Level level, std::string_view message) {
  std::lock_guard lock(entries_mutex_);
  entries_.push_back({level, std::string(message)});
}

std::shared_ptr<Sink> set_sink(std::shared_ptr<Sink> sink) {
  if (!sink) sink = std::make_shared<StderrSink>();
  std::lock_guard lock(slot().mutex);
  std::swap(slot().sink, sink);
  return sink;
}

std::shared_ptr<Sink> sink() {
  std::lock_guard lock(slot().mutex);
  return slot().sink;
}

ScopedSink::ScopedSink(std::shared_ptr<Sink> sink, std::optional<Level> new_level)
    : previous_sink_(set_sink(std::move(sink))) {
  if (new_level) {
    previous_level_ = level();
    set_level(*new_level);
  }
}

ScopedSink::~ScopedSink() {
  set_sink(std::move(previous_sink_));
  if (previous_level_) set_level(*previous_level_);
}

Level level() { return current_level().load(std::memory_order_relaxed); }
void set_level(Level new_level) { current_level().store(new_level); }

void write(Level message_level, std::string_view message) {
  if (message_level < level() || message_level == Level::kOff) return;
  sink()->log(message_level, message);
}

}  // namespace zeus::log
