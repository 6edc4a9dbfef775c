// The providers' query values are percent-encoded without libcurl (every
// configuration has it, the minimal one too): RFC 3986's unreserved
// characters stay, every other byte becomes %XX (upper-case hex), UTF-8
// byte by byte, as curl_easy_escape did.
#include <gtest/gtest.h>

#include "monitor/carbon/https_client.h"

namespace zeus::carbon_internal {
namespace {

TEST(QueryEscape, UnreservedCharactersStay) {
  EXPECT_EQ(query_escape("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(query_escape(""), "");
}

TEST(QueryEscape, EverythingElseIsPercentEncoded) {
  EXPECT_EQ(query_escape("a b&c=d/e?f#g+h"), "a%20b%26c%3Dd%2Fe%3Ff%23g%2Bh");
  EXPECT_EQ(query_escape("lifecycle,direct"), "lifecycle%2Cdirect");
  // UTF-8 and control bytes, byte by byte.
  EXPECT_EQ(query_escape("\xC3\xA9"), "%C3%A9");
  EXPECT_EQ(query_escape(std::string("\0\n\x7F", 3)), "%00%0A%7F");
}

}  // namespace
}  // namespace zeus::carbon_internal
