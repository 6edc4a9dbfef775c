// The OpenAI wire pieces the proxy touches: request flags, SSE framing
// across arbitrary reads, the per-chunk token scan, and the energy field.
#include "zeus/proxy/openai.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "zeus/util/error.h"

namespace zeus::proxy {
namespace {

TEST(OpenAiRequest, ReadsModelAndStreamAndAsksForUsage) {
  auto r = parse_completion_request(R"({"model":"m","stream":true,"messages":[]})", true);
  EXPECT_EQ(r.model, "m");
  EXPECT_TRUE(r.stream);
  EXPECT_FALSE(r.usage_requested);
  const auto up = nlohmann::json::parse(r.upstream_body);
  EXPECT_EQ(up["stream_options"]["include_usage"], true);
  EXPECT_EQ(up["model"], "m");
  // Fields keep their order.
  EXPECT_LT(r.upstream_body.find("\"model\""), r.upstream_body.find("\"stream\""));

  const std::string asked =
      R"({"model":"m","stream":true,"stream_options":{"include_usage":true}})";
  r = parse_completion_request(asked, true);
  EXPECT_TRUE(r.usage_requested);
  EXPECT_EQ(r.upstream_body, asked);
  const std::string plain = R"({"model":"m","prompt":"x"})";
  r = parse_completion_request(plain, true);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.upstream_body, plain);
  r = parse_completion_request(R"({"stream":true})", false);
  EXPECT_EQ(r.upstream_body, R"({"stream":true})");
}

TEST(OpenAiRequest, RejectsBodiesItCannotRead) {
  EXPECT_THROW(parse_completion_request("not json", true), Error);
  EXPECT_THROW(parse_completion_request("[1]", true), Error);
  EXPECT_THROW(parse_completion_request(R"({"stream":"yes"})", true), Error);
  EXPECT_THROW(parse_completion_request(R"({"model":3})", true), Error);
  // Not an object: the client's error (400), in every case, not only when the
  // proxy would have rewritten it.
  for (const char* options : {"\"yes\"", "[]", "3", "true"}) {
    for (bool stream : {true, false}) {
      const std::string body =
          fmt::format(R"({{"stream":{},"stream_options":{}}})", stream, options);
      try {
        (void)parse_completion_request(body, true);
        ADD_FAILURE() << "accepted " << body;
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << body;
        EXPECT_NE(std::string(e.what()).find("stream_options"), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_NO_THROW(parse_completion_request(R"({"stream":true,"stream_options":null})", true));
}

// Deep enough to overflow the stack where a value is serialized recursively
// (the proxy rewrites a request to ask for usage, and an answer to add energy).
std::string deeply_nested(const std::string& key, std::size_t depth = 300000) {
  return "{\"" + key + "\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

TEST(OpenAiRequest, DeeplyNestedBodiesAreRejectedNotRewritten) {
  std::string body = deeply_nested("messages");
  body.insert(1, "\"stream\":true,");
  try {
    (void)parse_completion_request(body, true);
    FAIL() << "accepted a body nested 300000 levels deep";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("deeper than"), std::string::npos) << e.what();
  }
}

TEST(OpenAiAnswer, DeeplyNestedAnswersPassUnchangedNotRewritten) {
  Usage usage;
  std::string body = deeply_nested("x");
  body.insert(1, "\"usage\":{\"completion_tokens\":1},");
  EXPECT_FALSE(add_energy_to_body(body, ResponseEnergy{Joules(1.0), 1}, usage));
  EXPECT_FALSE(
      add_energy_to_event("data: " + body + "\n\n", ResponseEnergy{Joules(1.0), 1}, usage));
  EXPECT_FALSE(read_usage(body).completion_tokens);
}

TEST(EventSplitter, CutsEventsAcrossReadsAndKeepsTheirBytes) {
  const std::string stream = "data: {\"a\":1}\n\ndata: x\r\n\r\n: comment\n\ndata: [DONE]\n\n";
  for (std::size_t piece = 1; piece <= stream.size(); ++piece) {
    EventSplitter s;
    std::string joined;
    int events = 0;
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      s.feed(std::string_view(stream).substr(at, piece), [&](std::string_view e) {
        joined += e;
        ++events;
      });
    }
    EXPECT_EQ(events, 4) << "piece " << piece;
    EXPECT_EQ(joined, stream) << "piece " << piece;
    EXPECT_EQ(s.pending_size(), 0u);
  }
  EventSplitter s;
  int events = 0;
  s.feed("data: half", [&](std::string_view) { ++events; });
  EXPECT_EQ(events, 0);
  EXPECT_EQ(s.pending(), "data: half");
}

TEST(InspectEvent, CountsTokensAndFindsUsageAndDone) {
  auto i = inspect_event(
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}],"
      "\"usage\":null}\n\n");
  EXPECT_EQ(i.tokens, 1);
  EXPECT_FALSE(i.usage);
  EXPECT_FALSE(i.no_choices);
  EXPECT_FALSE(i.done);
  // The role chunk carries no token; nor does an empty text.
  EXPECT_EQ(inspect_event(
                "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n")
                .tokens,
            0);
  EXPECT_EQ(inspect_event("data: {\"choices\":[{\"text\": \"a\"},{\"text\":\"b\"}]}\n\n").tokens,
            2);
  EXPECT_EQ(
      inspect_event("data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"r\"}}]}\n\n").tokens,
      1);
  // Quoted keys inside content do not count.
  EXPECT_EQ(inspect_event(R"(data: {"choices":[{"delta":{"content":"say \"content\": \"x\""}}]})"
                          "\n\n")
                .tokens,
            1);
  i = inspect_event("data: {\"choices\": [ ],\"usage\": {\"prompt_tokens\":3}}\n\n");
  EXPECT_TRUE(i.usage);
  EXPECT_TRUE(i.no_choices);
  EXPECT_TRUE(inspect_event("data: {\"choices\":null,\"usage\":{}}\n\n").no_choices);
  EXPECT_TRUE(inspect_event("data: [DONE]\n\n").done);
  EXPECT_FALSE(inspect_event("data: {\"x\":\"[DONE]\"}\n\n").done);
}

TEST(EnergyField, IsAddedToUsageAndNothingElseChanges) {
  const std::string body =
      R"({"id":"c1","choices":[{"index":0}],"usage":{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9}})";
  Usage u;
  const auto out = add_energy_to_body(body, {Joules(2.0), std::nullopt}, u);
  ASSERT_TRUE(out);
  EXPECT_EQ(u.prompt_tokens, 5);
  EXPECT_EQ(u.completion_tokens, 4);
  auto doc = nlohmann::ordered_json::parse(*out);
  EXPECT_DOUBLE_EQ(doc["usage"]["energy"]["joules"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(doc["usage"]["energy"]["joules_per_output_token"].get<double>(), 0.5);
  doc["usage"].erase("energy");
  EXPECT_EQ(doc.dump(), body);
  EXPECT_FALSE(add_energy_to_body(R"({"error":"x"})", {Joules(1.0), std::nullopt}, u));
  EXPECT_FALSE(add_energy_to_body("oops", {Joules(1.0), std::nullopt}, u));

  const auto framed = add_energy_to_event(
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":0}}\r\n\r\n",
      {Joules(3.0), 7}, u);
  ASSERT_TRUE(framed);
  EXPECT_TRUE(framed->starts_with("data: {\"choices\":[],\"usage\":{"));
  EXPECT_TRUE(framed->ends_with("}\n\n"));
  // completion_tokens 0: no per-token figure.
  EXPECT_NE(framed->find("\"joules_per_output_token\":null"), std::string::npos);
  EXPECT_EQ(event_data("event: x\ndata: a\ndata: b\n\n"), "a\nb");
}

}  // namespace
}  // namespace zeus::proxy
