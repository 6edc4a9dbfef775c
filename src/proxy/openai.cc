#include "zeus/proxy/openai.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "util/json.h"
#include "zeus/util/error.h"

namespace zeus::proxy {

namespace {

// Order-preserving JSON, so a body we touch keeps its fields' order.
using ojson = nlohmann::ordered_json;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

// nullopt for anything but a JSON object, and for one nested deeper than
// kMaxJsonDepth (the proxy would recurse once per level rewriting it).
std::optional<ojson> parse_object(std::string_view text) {
  if (json_nesting_exceeds(text)) return std::nullopt;
  ojson value = ojson::parse(text.begin(), text.end(), nullptr, false);
  if (value.is_discarded() || !value.is_object()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> count(const ojson& usage, const char* key) {
  const auto it = usage.find(key);
  if (it == usage.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

Usage usage_of(const ojson& usage) {
  return {count(usage, "prompt_tokens"), count(usage, "completion_tokens")};
}

// Adds the energy object to `doc`'s usage; false when it has none.
bool add_energy(ojson& doc, const ResponseEnergy& energy, Usage& usage) {
  const auto it = doc.find("usage");
  if (it == doc.end() || !it->is_object()) return false;
  usage = usage_of(*it);
  const std::optional<std::int64_t> tokens =
      usage.completion_tokens ? usage.completion_tokens : energy.output_tokens;
  ojson e = ojson::object();
  e["joules"] = energy.energy.value();
  if (tokens && *tokens > 0) {
    e["joules_per_output_token"] = energy.energy.value() / static_cast<double>(*tokens);
  } else {
    e["joules_per_output_token"] = nullptr;
  }
  (*it)["energy"] = std::move(e);
  return true;
}

}  // namespace

CompletionRequest parse_completion_request(std::string_view body, bool ask_usage) {
  if (json_nesting_exceeds(body)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the request body nests arrays and objects deeper than {} levels",
                            kMaxJsonDepth));
  }
  std::optional<ojson> doc = parse_object(body);
  if (!doc) {
    throw_error(ErrorCode::kInvalidArgument,
                "the request body is not a JSON object; send an OpenAI completion request");
  }
  CompletionRequest r;
  if (const auto m = doc->find("model"); m != doc->end() && !m->is_null()) {
    if (!m->is_string()) throw_error(ErrorCode::kInvalidArgument, "\"model\" must be a string");
    r.model = m->get<std::string>();
  }
  if (const auto s = doc->find("stream"); s != doc->end() && !s->is_null()) {
    if (!s->is_boolean())
      throw_error(ErrorCode::kInvalidArgument, "\"stream\" must be true or false");
    r.stream = s->get<bool>();
  }
  if (const auto o = doc->find("stream_options"); o != doc->end() && !o->is_null()) {
    // Checked here, not where it is rewritten: adding include_usage to a
    // string or an array would fail there, as a 500.
    if (!o->is_object())
      throw_error(ErrorCode::kInvalidArgument, "\"stream_options\" must be an object");
    const auto u = o->find("include_usage");
    r.usage_requested = u != o->end() && u->is_boolean() && u->get<bool>();
  }
  if (r.stream && !r.usage_requested && ask_usage) {
    (*doc)["stream_options"]["include_usage"] = true;
    r.upstream_body = doc->dump();
    r.usage_injected = true;
  } else {
    r.upstream_body = std::string(body);
  }
  return r;
}

void EventSplitter::feed(std::string_view bytes,
                         const std::function<void(std::string_view)>& on_event) {
  pending_.append(bytes);
  std::size_t start = 0;
  std::size_t i = scanned_;
  // An event ends at a blank line: "\n\n" or "\r\n\r\n" (or mixed).
  while (i < pending_.size()) {
    if (pending_[i] != '\n') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    if (j < pending_.size() && pending_[j] == '\r') ++j;
    if (j < pending_.size() && pending_[j] == '\n') {
      on_event(std::string_view(pending_).substr(start, j + 1 - start));
      start = j + 1;
      i = start;
    } else if (j >= pending_.size()) {
      break;  // the blank line may still come
    } else {
      i = j;
    }
  }
  pending_.erase(0, start);
  scanned_ = i - start;
}

EventInfo inspect_event(std::string_view frame) {
  EventInfo info;
  if (frame.find("[DONE]") != std::string_view::npos && frame.find('{') == std::string_view::npos) {
    info.done = true;
    return info;
  }
  const auto value_at = [&](std::size_t key_end) { return skip_space(frame, key_end); };
  for (std::size_t at = frame.find("\"usage\":"); at != std::string_view::npos;
       at = frame.find("\"usage\":", at + 1)) {
    const std::size_t v = value_at(at + 8);
    if (v < frame.size() && frame[v] == '{') info.usage = true;
  }
  // The usage-only chunk has "choices": [] (OpenAI), null or none (some
  // servers).
  info.no_choices = true;
  if (const auto at = frame.find("\"choices\":"); at != std::string_view::npos) {
    std::size_t v = value_at(at + 10);
    if (v < frame.size() && frame[v] == '[') {
      v = skip_space(frame, v + 1);
      info.no_choices = v < frame.size() && frame[v] == ']';
    }
  }
  // content (also reasoning_content) and text with a non-empty string value.
  for (std::string_view key : {std::string_view("content\":"), std::string_view("\"text\":")}) {
    for (std::size_t at = frame.find(key); at != std::string_view::npos;
         at = frame.find(key, at + 1)) {
      const std::size_t v = value_at(at + key.size());
      if (v + 1 < frame.size() && frame[v] == '"' && frame[v + 1] != '"') ++info.tokens;
    }
  }
  return info;
}

std::string event_data(std::string_view frame) {
  std::string data;
  bool first = true;
  while (!frame.empty()) {
    const auto nl = frame.find('\n');
    std::string_view line = frame.substr(0, nl);
    frame = nl == std::string_view::npos ? std::string_view() : frame.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.starts_with("data:")) continue;
    line.remove_prefix(5);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!first) data.push_back('\n');
    data.append(line);
    first = false;
  }
  return data;
}

Usage read_usage(std::string_view json_text) {
  std::optional<ojson> doc = parse_object(json_text);
  if (!doc) return {};
  const auto it = doc->find("usage");
  if (it == doc->end() || !it->is_object()) return {};
  return usage_of(*it);
}

std::optional<std::string> add_energy_to_body(std::string_view body, const ResponseEnergy& energy,
                                              Usage& usage) {
  std::optional<ojson> doc = parse_object(body);
  if (!doc || !add_energy(*doc, energy, usage)) return std::nullopt;
  return doc->dump();
}

std::optional<std::string> add_energy_to_event(std::string_view frame, const ResponseEnergy& energy,
                                               Usage& usage) {
  std::optional<ojson> doc = parse_object(event_data(frame));
  if (!doc || !add_energy(*doc, energy, usage)) return std::nullopt;
  return fmt::format("data: {}\n\n", doc->dump());
}

}  // namespace zeus::proxy
