// What the energy proxy reads from a client it does not trust: a completion
// request body. parse_completion_request must answer bad bodies with
// zeus::Error (a 400), never another exception (a 500) or a crash; a body it
// accepts keeps the client's model and stream flag, and the body it sends
// upstream is the client's own or, when it asks for usage, the same object
// with stream_options.include_usage set.
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_support.h"
#include "zeus/proxy/openai.h"
#include "zeus/util/error.h"

namespace {

void check_accepted(std::string_view body, const zeus::proxy::CompletionRequest& r) {
  const auto doc = nlohmann::ordered_json::parse(body);
  ZEUS_FUZZ_CHECK(doc.is_object());
  if (!r.usage_injected) {
    ZEUS_FUZZ_CHECK(r.upstream_body == body);
    return;
  }
  ZEUS_FUZZ_CHECK(r.stream && !r.usage_requested);
  const auto up = nlohmann::ordered_json::parse(r.upstream_body);
  ZEUS_FUZZ_CHECK(up["stream_options"]["include_usage"] == true);
  ZEUS_FUZZ_CHECK(up.size() == doc.size() + (doc.contains("stream_options") ? 0 : 1));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body = zeus::fuzz::as_text(data, size);
  for (bool ask_usage : {true, false}) {
    try {
      const auto r = zeus::proxy::parse_completion_request(body, ask_usage);
      zeus::fuzz::accepted();
      check_accepted(body, r);
      ZEUS_FUZZ_CHECK(ask_usage || !r.usage_injected);
    } catch (const zeus::Error&) {
    }
  }
  return 0;
}
