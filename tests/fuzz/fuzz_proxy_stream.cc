// What the energy proxy reads from an inference server it does not control:
// the SSE byte stream of a streamed completion. It is cut into events (two
// different read sizes must give the same events, and the events plus the
// unfinished rest must be the input), each event scanned for tokens and
// usage, and a usage event rewritten with the energy field. The whole input
// is also read as a non-streamed answer's body, rewritten the same way.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "zeus/proxy/openai.h"
#include "zeus/util/error.h"

namespace {

std::vector<std::string> split(std::string_view text, std::size_t piece, std::string& rest) {
  zeus::proxy::EventSplitter s;
  std::vector<std::string> events;
  for (std::size_t at = 0; at < text.size(); at += piece) {
    s.feed(text.substr(at, piece), [&](std::string_view e) { events.emplace_back(e); });
  }
  rest = std::string(s.pending());
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const std::string_view text = zeus::fuzz::as_text(data, size);
    std::string rest_whole, rest_bytes;
    const auto events = split(text, text.size() + 1, rest_whole);
    const auto by_bytes = split(text, 7, rest_bytes);
    ZEUS_FUZZ_CHECK(events == by_bytes && rest_whole == rest_bytes);
    std::string joined;
    for (const auto& e : events) joined += e;
    ZEUS_FUZZ_CHECK(joined + rest_whole == text);
    for (const auto& e : events) {
      const auto info = zeus::proxy::inspect_event(e);
      ZEUS_FUZZ_CHECK(info.tokens >= 0 && static_cast<std::size_t>(info.tokens) <= e.size());
      zeus::proxy::Usage usage;
      const auto framed =
          zeus::proxy::add_energy_to_event(e, {zeus::Joules(1.5), std::int64_t{3}}, usage);
      if (!framed) continue;
      ZEUS_FUZZ_CHECK(framed->starts_with("data: ") && framed->ends_with("\n\n"));
      const auto doc = nlohmann::json::parse(zeus::proxy::event_data(*framed));
      ZEUS_FUZZ_CHECK(doc["usage"]["energy"]["joules"] == 1.5);
    }
    zeus::proxy::Usage usage;
    if (const auto body = zeus::proxy::add_energy_to_body(text, {zeus::Joules(2.5), {}}, usage)) {
      const auto doc = nlohmann::json::parse(*body);
      ZEUS_FUZZ_CHECK(doc["usage"]["energy"]["joules"] == 2.5);
      const auto again = zeus::proxy::read_usage(*body);
      ZEUS_FUZZ_CHECK(again.completion_tokens == usage.completion_tokens);
    }
    if (!events.empty()) zeus::fuzz::accepted();
  } catch (const zeus::Error&) {
  }
  return 0;
}
