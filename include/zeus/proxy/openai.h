// The parts of the OpenAI-compatible wire format the energy proxy reads and
// touches (the /v1/chat/completions and /v1/completions shape of vLLM, TGI,
// SGLang and llama.cpp's server): the request's model and stream flags, the
// Server-Sent Events framing of a streamed answer, the tokens in a chunk, the
// usage object, and the energy field added to it. Everything else passes
// through untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "zeus/util/units.h"

namespace zeus::proxy {

// What the proxy needs from a completion request body.
struct CompletionRequest {
  std::string model;  // "" when the body names none
  bool stream = false;
  // The client asked for the final usage chunk (stream_options.include_usage).
  bool usage_requested = false;
  // The body to send upstream: the client's own, or, for a stream without
  // include_usage when `ask_usage` is set, one that asks for it (the proxy
  // then drops the usage chunk, so the client sees what it asked for).
  std::string upstream_body;
  bool usage_injected = false;  // upstream_body asks for the usage chunk the client did not
};

// kInvalidArgument (a 400 for the client) when the body is not a JSON object
// or "stream"/"model" have the wrong type.
CompletionRequest parse_completion_request(std::string_view body, bool ask_usage);

// Cuts a byte stream into SSE events, each handed over with its raw bytes,
// terminating blank line included, so it can be passed on unchanged.
class EventSplitter {
 public:
  // Calls `on_event` for each complete event in `bytes` (and what came before).
  void feed(std::string_view bytes, const std::function<void(std::string_view)>& on_event);
  // Bytes of an unfinished event (for the end of a stream).
  std::string_view pending() const { return pending_; }
  std::size_t pending_size() const { return pending_.size(); }

 private:
  std::string pending_;
  std::size_t scanned_ = 0;  // pending_ before this holds no event end
};

// What one streamed event carries.
struct EventInfo {
  bool done = false;        // "data: [DONE]"
  bool usage = false;       // has a non-null "usage" object
  bool no_choices = false;  // "choices" empty, null or absent (the usage-only chunk)
  int tokens = 0;           // choices with non-empty content or text
};
// A cheap scan (no JSON parse: it runs for every chunk).
EventInfo inspect_event(std::string_view frame);

struct Usage {
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> completion_tokens;
};

// The energy the proxy reports for one response.
struct ResponseEnergy {
  Joules energy{0.0};
  std::optional<std::int64_t> output_tokens;  // for joules per output token
};

// A non-streaming answer's body with usage.energy added; `usage` gets its
// token counts. nullopt when the body is not a JSON object with a "usage"
// object (then it passes unchanged).
std::optional<std::string> add_energy_to_body(std::string_view body, const ResponseEnergy& energy,
                                              Usage& usage);
// Reads the usage of a body or of one event's data without changing it.
Usage read_usage(std::string_view json_text);
// The event frame with usage.energy added (re-framed as "data: ...\n\n");
// nullopt when it carries no usage object.
std::optional<std::string> add_energy_to_event(std::string_view frame, const ResponseEnergy& energy,
                                               Usage& usage);
// The data of an event (data: lines joined), for parsing.
std::string event_data(std::string_view frame);

}  // namespace zeus::proxy
