#include <string>

#include "http/exchange.h"

namespace zeus::http {
namespace {

// Appends "<field>: <line>\n" for each line of `value` (SSE framing).
void append_lines(std::string& frame, std::string_view field, std::string_view value) {
  std::size_t start = 0;
  for (;;) {
    const auto nl = value.find('\n', start);
    frame.append(field).append(": ").append(value.substr(start, nl - start)).push_back('\n');
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
}

// Event and id fields end at the first line break: a value cannot split a frame.
std::string_view first_line(std::string_view v) { return v.substr(0, v.find_first_of("\r\n")); }

}  // namespace

bool EventStream::send(std::string_view data, std::string_view event, std::string_view id) {
  if (!sink_) return false;
  std::string frame;
  frame.reserve(data.size() + 32);
  if (!event.empty()) append_lines(frame, "event", first_line(event));
  if (!id.empty()) append_lines(frame, "id", first_line(id));
  append_lines(frame, "data", data);
  frame.push_back('\n');
  return sink_->write(std::move(frame));
}

bool EventStream::send_frames(std::string frames) {
  if (!sink_ || frames.empty()) return sink_ && sink_->is_open();
  return sink_->write(std::move(frames));
}

bool EventStream::comment(std::string_view text) {
  if (!sink_) return false;
  std::string frame;
  append_lines(frame, "", text);
  frame.push_back('\n');
  return sink_->write(std::move(frame));
}

void EventStream::close() {
  if (sink_) sink_->close();
}

bool EventStream::when_drained(std::size_t below, std::function<void()> callback) {
  if (!sink_) return true;
  return sink_->when_drained(below, std::move(callback));
}

bool EventStream::is_open() const { return sink_ && sink_->is_open(); }

void EventStream::on_close(std::function<void()> callback) {
  if (sink_) {
    sink_->on_close(std::move(callback));
  } else if (callback) {
    callback();
  }
}

}  // namespace zeus::http
