// Bearer tokens: the JWT codec on its own, then the daemon's auth matrix
// (404 before auth for a disabled group, 401 with WWW-Authenticate, 403 for a
// missing scope, 200), as upstream.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ctime>
#include <fstream>

#include "zeus/zeusd/jwt.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

TEST(Jwt, RoundTripAndClaims) {
  TokenClaims c{"alice", {ApiGroup::kGpuRead, ApiGroup::kCpuRead}, now_s() + 3600};
  const std::string t = issue_token("secret-key", c);
  EXPECT_EQ(std::count(t.begin(), t.end(), '.'), 2);
  const auto header = base64url_decode(t.substr(0, t.find('.')));
  ASSERT_TRUE(header);
  EXPECT_EQ(nlohmann::json::parse(*header), nlohmann::json({{"typ", "JWT"}, {"alg", "HS256"}}));
  const TokenClaims v = verify_token("secret-key", t, now_s());
  EXPECT_EQ(v.sub, "alice");
  EXPECT_TRUE(v.has_scope(ApiGroup::kCpuRead));
  EXPECT_FALSE(v.has_scope(ApiGroup::kGpuControl));
  EXPECT_EQ(v.exp, c.exp);
  // No expiry: the claim is left out and the token is accepted.
  const std::string forever = issue_token("k", {"bob", {ApiGroup::kGpuControl}, std::nullopt});
  const auto payload = base64url_decode(
      forever.substr(forever.find('.') + 1, forever.rfind('.') - forever.find('.') - 1));
  EXPECT_FALSE(nlohmann::json::parse(*payload).contains("exp"));
  EXPECT_FALSE(verify_token("k", forever, now_s()).exp);
}

TEST(Jwt, MatchesAnIndependentHmacSha256) {
  // Computed with Python's hmac + hashlib over the same header and payload
  // bytes: our HS256 signature must be identical.
  EXPECT_EQ(issue_token("k", {"u", {ApiGroup::kGpuRead}, 2000000000}),
            "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9."
            "eyJleHAiOjIwMDAwMDAwMDAsInNjb3BlcyI6WyJncHUtcmVhZCJdLCJzdWIiOiJ1In0.2OOMzbKbKKQN9pth-"
            "WZOAujRfh27ChmpTz3cNocLMBY");
}

TEST(Jwt, RejectsForgeriesAndExpiredTokens) {
  const std::string good = issue_token("right", {"eve", {ApiGroup::kGpuControl}, now_s() + 60});
  const auto expect_invalid = [](const std::string& key, const std::string& token,
                                 const char* needle, bool expired = false) {
    try {
      verify_token(key, token, now_s());
      ADD_FAILURE() << "accepted: " << token;
    } catch (const TokenError& e) {
      EXPECT_EQ(e.expired(), expired);
      EXPECT_THAT(e.what(), HasSubstr(needle));
    }
  };
  expect_invalid("wrong", good, "signature does not match");
  // alg:none with no signature, and with the original signature.
  const std::string none_header = base64url_encode(R"({"alg":"none","typ":"JWT"})");
  const std::string body = good.substr(good.find('.') + 1, good.rfind('.') - good.find('.') - 1);
  expect_invalid("right", none_header + "." + body + ".", "only HS256");
  expect_invalid("right", none_header + "." + body + "." + good.substr(good.rfind('.') + 1),
                 "only HS256");
  expect_invalid("right", base64url_encode(R"({"alg":"HS512"})") + "." + body + ".x", "only HS256");
  // A payload swapped under the original signature (scope escalation).
  const std::string forged_body =
      base64url_encode(R"({"sub":"eve","scopes":["gpu-control","cpu-read"]})");
  expect_invalid(
      "right",
      good.substr(0, good.find('.')) + "." + forged_body + "." + good.substr(good.rfind('.') + 1),
      "signature does not match");
  expect_invalid("right", "abc", "three");
  expect_invalid("right", "a.b.c.d", "three");
  expect_invalid("right", "!!.??.**", "base64url");
  // Expired: more than the 60 s leeway ago. Within the leeway: accepted.
  expect_invalid("right", issue_token("right", {"eve", {}, now_s() - 120}), "expired", true);
  EXPECT_NO_THROW(verify_token("right", issue_token("right", {"eve", {}, now_s() - 30}), now_s()));
}

TEST(Jwt, Base64UrlIsCanonical) {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\x00\x01"}) {
    EXPECT_EQ(base64url_decode(base64url_encode(s)), s);
  }
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
  EXPECT_FALSE(base64url_decode("Zg=="));  // padding is not base64url
  EXPECT_FALSE(base64url_decode("Zh"));    // non-zero trailing bits
  EXPECT_FALSE(base64url_decode("Z"));
  EXPECT_FALSE(base64url_decode("a+b/"));
}

TEST(Jwt, ExpiryDurations) {
  EXPECT_EQ(expiry_from_duration("never", 100), std::nullopt);
  EXPECT_EQ(expiry_from_duration("0", 100), std::nullopt);
  EXPECT_EQ(expiry_from_duration("1h", 100), 3700);
  EXPECT_EQ(expiry_from_duration("7d", 0), 7 * 86400);
  EXPECT_EQ(expiry_from_duration("30d", 0), 30 * 86400);
  EXPECT_EQ(expiry_from_duration("1h 30m", 0), 5400);
  EXPECT_EQ(expiry_from_duration("2w", 0), 14 * 86400);
  for (const char* bad : {"", "h", "1x", "soon", "-1h", "1.5h", "99999999999999d"}) {
    EXPECT_THROW(expiry_from_duration(bad, 0), Error) << bad;
  }
}

const std::string kKey = "a-signing-key-of-forty-random-bytes-long\n";

class DaemonAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = make_temp_dir("zeusd_auth");
    key_path = write_signing_key(dir, kKey);
    DaemonOptions o;
    o.signing_key_path = key_path;
    o.enabled = {ApiGroup::kGpuControl, ApiGroup::kGpuRead};
    o.num_workers = 2;
    d = std::make_unique<RunningDaemon>(o, node.devices);
  }
  void TearDown() override {
    d.reset();
    std::filesystem::remove_all(dir);
  }
  std::string token(std::vector<ApiGroup> scopes, std::optional<std::int64_t> exp = std::nullopt,
                    const std::string& key = kKey) {
    return issue_token(key, {"alice", std::move(scopes), exp});
  }

  FakeNode node;
  std::string dir, key_path;
  std::unique_ptr<RunningDaemon> d;
};

TEST_F(DaemonAuth, Matrix) {
  auto c = d->client();
  const std::string set = "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true";
  // Always open.
  EXPECT_EQ(c.get("/discover").status, 200);
  EXPECT_EQ(json_of(c.get("/discover"))["auth_required"], true);
  EXPECT_EQ(c.get("/time").status, 200);
  // Disabled group: 404 before any auth.
  EXPECT_EQ(get(c, "/cpu/get_cumulative_energy?cpu=true&dram=true").status, 404);
  // No token / malformed header / wrong key / expired: 401 with the challenge.
  for (const auto& t : {std::string(), std::string("garbage"),
                        token({ApiGroup::kGpuControl}, std::nullopt, "other-key"),
                        token({ApiGroup::kGpuControl}, now_s() - 3600)}) {
    const auto r = post(c, set, t);
    EXPECT_EQ(r.status, 401) << t;
    EXPECT_EQ(r.headers.get("WWW-Authenticate").value_or(""), R"(Bearer realm="zeusd")");
    EXPECT_TRUE(json_of(r).contains("error"));
  }
  EXPECT_THAT(json_of(post(c, set, token({ApiGroup::kGpuControl}, now_s() - 3600)))["error"]
                  .get<std::string>(),
              HasSubstr("expired"));
  // Valid token without the scope: 403 naming it.
  auto r = post(c, set, token({ApiGroup::kGpuRead}));
  EXPECT_EQ(r.status, 403);
  EXPECT_THAT(json_of(r)["error"].get<std::string>(),
              HasSubstr("lacks required scope 'gpu-control'"));
  EXPECT_EQ(node.nvml.power_limit_mw(0), 700000u);
  // Right scope: 200; read scope reads.
  EXPECT_EQ(post(c, set, token({ApiGroup::kGpuControl})).status, 200);
  EXPECT_EQ(node.nvml.power_limit_mw(0), 300000u);
  EXPECT_EQ(get(c, "/gpu/get_power", token({ApiGroup::kGpuRead})).status, 200);
  EXPECT_EQ(get(c, "/gpu/get_power", token({ApiGroup::kGpuControl})).status, 403);
  // Headers other than "Bearer <token>" are refused.
  http::Headers h;
  h.set("Authorization", "Basic " + token({ApiGroup::kGpuRead}));
  EXPECT_EQ(c.request(http::Method::kGet, "/gpu/get_power", {}, h).status, 401);
}

TEST_F(DaemonAuth, WhoAmI) {
  auto c = d->client();
  const auto exp = now_s() + 600;
  const auto r = get(c, "/auth/whoami", token({ApiGroup::kGpuRead, ApiGroup::kGpuControl}, exp));
  ASSERT_EQ(r.status, 200) << r.body;
  const auto j = json_of(r);
  EXPECT_EQ(j["sub"], "alice");
  EXPECT_EQ(j["scopes"], nlohmann::json({"gpu-read", "gpu-control"}));
  EXPECT_EQ(j["exp"], exp);
  EXPECT_FALSE(json_of(get(c, "/auth/whoami", token({})))["scopes"].size());
  EXPECT_FALSE(json_of(get(c, "/auth/whoami", token({}))).contains("exp"));
  EXPECT_EQ(get(c, "/auth/whoami").status, 401);
}

// The class: unbounded resources per client. One token subject cannot take
// every lease (and so lock every other user out): past its share it gets 429,
// past the daemon's capacity everyone gets 503, both with Retry-After.
TEST(DaemonLeaseQuota, OneOwnerCannotLockTheOthersOut) {
  FakeNode node;
  const std::string dir = make_temp_dir("zeusd_quota");
  DaemonOptions o;
  o.signing_key_path = write_signing_key(dir, kKey);
  o.max_leases_per_owner = 2;
  o.max_leases = 3;
  {
    RunningDaemon d(o, node.devices);
    auto c = d.client();
    const auto as = [](const std::string& who) {
      return issue_token(kKey, {who, {ApiGroup::kGpuControl}, std::nullopt});
    };
    const std::string acquire = "/lease/acquire?ttl_s=60";
    EXPECT_EQ(post(c, acquire, as("mallory")).status, 200);
    EXPECT_EQ(post(c, acquire, as("mallory")).status, 200);
    auto r = post(c, acquire, as("mallory"));
    EXPECT_EQ(r.status, 429) << r.body;
    EXPECT_EQ(r.headers.get("Retry-After").value_or(""), "60");
    EXPECT_THAT(json_of(r)["error"].get<std::string>(),
                HasSubstr("token subject 'mallory' already holds 2 leases"));
    EXPECT_EQ(post(c, acquire, as("alice")).status, 200);  // another user still may
    r = post(c, acquire, as("bob"));
    EXPECT_EQ(r.status, 503) << r.body;  // the daemon's whole table is full
    EXPECT_TRUE(r.headers.get("Retry-After").has_value());
    EXPECT_EQ(d.daemon->active_leases(), 3u);
  }
  std::filesystem::remove_all(dir);
}

TEST(DaemonAuthKey, EmptyKeyFileIsRefused) {
  const std::string dir = make_temp_dir("zeusd_key");
  DaemonOptions o;
  o.signing_key_path = write_signing_key(dir, "");
  o.socket_path = dir + "/s.sock";
  try {
    Daemon d(o, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("empty"));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zeus::zeusd::testing
