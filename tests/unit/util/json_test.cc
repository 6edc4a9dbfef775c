#include "util/json.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zeus {
namespace {

using nlohmann::json;

// The message and field of the FieldError that `f` throws.
template <class F>
std::pair<FieldError, bool> catch_field_error(F&& f) {
  try {
    f();
  } catch (const FieldError& e) {
    return {e, true};
  }
  return {FieldError(ErrorCode::kInternal, "", "no error"), false};
}

TEST(Json, ParseErrorNamesSourceLineAndColumnNotLibraryText) {
  const auto [e, thrown] =
      catch_field_error([] { parse_json("{\n  \"a\": 1,\n  oops\n}", "x.json"); });
  ASSERT_TRUE(thrown);
  EXPECT_EQ(e.code(), ErrorCode::kParse);
  EXPECT_NE(std::string(e.what()).find("x.json: not valid JSON (line 3"), std::string::npos)
      << e.what();
  EXPECT_EQ(std::string(e.what()).find("[json.exception"), std::string::npos) << e.what();
  const auto [empty, thrown2] = catch_field_error([] { parse_json("  \n", "y.json"); });
  ASSERT_TRUE(thrown2);
  EXPECT_NE(std::string(empty.what()).find("y.json: empty"), std::string::npos);
}

TEST(Json, NumbersBeyondDoubleAreAParseErrorNotALibraryException) {
  EXPECT_THROW(parse_json(R"({"x": 18e308})", "big.json"), FieldError);
  EXPECT_THROW(parse_json("-1e999", "big.json"), FieldError);
}

TEST(Json, FieldsAreCheckedForTypeAndRangeWithTheirPath) {
  const json d = json::parse(
      R"({"m":[{"w":300,"e":1.5},{"w":"x","e":2}],"n":-3,"f":2.5,"s":"abc","b":true,"u":18446744073709551615,"i":4.0})");
  JsonObject o(d, "p.json");
  const auto items = o.objects("m");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].integer("w", 0, 1000), 300);
  EXPECT_DOUBLE_EQ(items[0].number("e", 0.0), 1.5);
  auto [e1, t1] = catch_field_error([&] { items[1].integer("w"); });
  ASSERT_TRUE(t1);
  EXPECT_EQ(e1.code(), ErrorCode::kParse);
  EXPECT_EQ(e1.field(), "m[1].w");
  EXPECT_NE(std::string(e1.what()).find("p.json: m[1].w: expected an integer, got a string \"x\""),
            std::string::npos)
      << e1.what();
  auto [e2, t2] = catch_field_error([&] { o.integer("n", 0); });
  ASSERT_TRUE(t2);
  EXPECT_EQ(e2.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(e2.what()).find("must be at least 0"), std::string::npos);
  // Integers beyond int64 and non-integral floats never narrow silently.
  EXPECT_THROW(o.integer("u"), FieldError);
  EXPECT_THROW(o.integer("f"), FieldError);
  EXPECT_EQ(o.integer("i"), 4);
  EXPECT_EQ(o.integer("n", -10, 10), -3);
  EXPECT_THROW(o.integer("n", -2, 10), FieldError);
  EXPECT_EQ(o.string("s"), "abc");
  EXPECT_THROW(o.string("s", 2), FieldError);
  EXPECT_TRUE(o.boolean("b"));
  EXPECT_THROW(o.boolean("s"), FieldError);
  EXPECT_FALSE(o.optional_number("missing").has_value());
  auto [e3, t3] = catch_field_error([&] { o.number("missing"); });
  ASSERT_TRUE(t3);
  EXPECT_EQ(e3.field(), "missing");
  EXPECT_NE(std::string(e3.what()).find("missing"), std::string::npos);
}

TEST(Json, NonFiniteAndHugeNumbersAreOutOfRangeAndPrintShort) {
  json d;
  d["x"] = std::numeric_limits<double>::infinity();
  d["y"] = 1e308;
  JsonObject o(d, "m.json");
  EXPECT_THROW(o.number("x"), FieldError);
  auto [e, t] = catch_field_error([&] { o.number("y", 0.0, 1e6); });
  ASSERT_TRUE(t);
  // No 309-digit rendering of the value or the bound.
  EXPECT_LT(std::string(e.what()).size(), 120u) << e.what();
}

TEST(Json, UnknownKeysAreNamedEscaped) {
  const json d = json::parse(R"({"a":1,"b\u0007c":2})");
  JsonObject o(d, "body");
  auto [e, t] = catch_field_error([&] { o.reject_unknown_keys({"a"}); });
  ASSERT_TRUE(t);
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(std::string(e.what()).find('\a'), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("unknown field"), std::string::npos);
  EXPECT_NO_THROW(o.reject_unknown_keys({"a", "b\ac"}));
}

TEST(Json, NotAnObjectIsAParseError) {
  const json d = json::parse("[1,2]");
  EXPECT_THROW(JsonObject(d, "z"), FieldError);
}

// Nested `depth` levels of arrays, built without recursion.
json nested_array(std::size_t depth) {
  json v = json::array();
  for (std::size_t i = 1; i < depth; ++i) {
    json outer = json::array();
    outer.push_back(std::move(v));
    v = std::move(outer);
  }
  return v;
}

TEST(ParseJson, NestingBeyondTheBoundIsAParseErrorAtTheBoundItIsAccepted) {
  const std::size_t deep = 300000;  // overflows the stack if copied or dumped recursively
  const std::string too_deep = std::string(deep, '[') + std::string(deep, ']');
  const auto [e, thrown] = catch_field_error([&] { parse_json(too_deep, "request body"); });
  ASSERT_TRUE(thrown);
  EXPECT_EQ(e.code(), ErrorCode::kParse);
  EXPECT_NE(std::string(e.what()).find("request body: nested deeper than"), std::string::npos)
      << e.what();
  const std::string at_bound = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_NO_THROW(parse_json(at_bound, "x"));
  const std::string one_more = "[" + at_bound + "]";
  EXPECT_THROW(parse_json(one_more, "x"), FieldError);
}

TEST(ParseJson, BracketsInsideStringsAndEscapesDoNotCountAsNesting) {
  const std::string brackets(kMaxJsonDepth * 4, '[');
  EXPECT_FALSE(json_nesting_exceeds("[\"" + brackets + "\"]"));
  EXPECT_FALSE(json_nesting_exceeds("{\"a\\\"" + brackets + "\": 1}"));
  EXPECT_TRUE(json_nesting_exceeds("{\"a\\\\\": " + brackets));
  EXPECT_NO_THROW(parse_json("[\"" + brackets + "\"]", "x"));
}

TEST(JsonExcerpt, DeepOrHugeValuesAreQuotedByAShortPrefixWithoutRecursion) {
  // dump() of this value would recurse 300000 times and overflow the stack.
  const json deep = nested_array(300000);
  const std::string shown = json_excerpt(deep);
  EXPECT_LE(shown.size(), 40u);
  EXPECT_EQ(shown.substr(0, 5), "[[[[[");
  EXPECT_TRUE(shown.ends_with("...")) << shown;

  json wide = json::array();
  for (int i = 0; i < 100000; ++i) wide.push_back(i);
  EXPECT_EQ(json_excerpt(wide).substr(0, 8), "[0,1,2,3");
  EXPECT_LE(json_excerpt(wide).size(), 40u);

  EXPECT_EQ(json_excerpt(json::parse(R"({"a":[1,{"b":null}],"c":"x\ny"})")),
            R"({"a":[1,{"b":null}],"c":"x\ny"})");
  const std::string long_text(1 << 20, 'z');
  EXPECT_EQ(json_excerpt(json(long_text)), "\"" + std::string(36, 'z') + "...");
  EXPECT_EQ(json_excerpt(json("\x1b[2J")), R"("\u001b[2J")");
}

}  // namespace
}  // namespace zeus

namespace zeus {
namespace {

TEST(ParseJson, NumberBeyondDoubleIsAParseErrorNotACrash) {
  try {
    (void)parse_json(R"({"a": 1e400})", "big.json");
    FAIL() << "accepted 1e400";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kParse);
    EXPECT_NE(std::string(e.what()).find("big.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zeus
