// What an unauthenticated peer controls in a zeusd request: the query string
// of a control endpoint (fields, booleans, integers, id lists) and the bearer
// token; plus the command-override file's TOML subset. The first byte picks
// the parser. Accepted queries must give sorted, unique ids and in-range
// numbers; an accepted token must round-trip through issue/verify with the
// same claims.
#include <algorithm>

#include "fuzz_support.h"
#include "zeus/http/message.h"
#include "zeus/util/error.h"
#include "zeus/zeusd/jwt.h"
#include "zeusd/command_override.h"
#include "zeusd/query.h"

namespace {
constexpr std::string_view kKey = "fuzz-signing-key";
constexpr std::int64_t kNow = 1'800'000'000;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = zeus::fuzz::as_text(data + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0: {
        std::string path;
        std::vector<std::pair<std::string, std::string>> query;
        zeus::http::split_target("/gpu/set_power_limit?" + std::string(text), path, query);
        zeus::zeusd::QueryFields q(query, {"gpu_ids", "power_limit_mw", "block", "lease_id"});
        const auto ids = zeus::zeusd::parse_device_ids(q.required("gpu_ids"), "GPU");
        const std::uint32_t mw = q.u32("power_limit_mw");
        const bool block = q.boolean("block");
        ZEUS_FUZZ_CHECK(!ids.empty());
        ZEUS_FUZZ_CHECK(std::is_sorted(ids.begin(), ids.end()));
        ZEUS_FUZZ_CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
        for (int id : ids) ZEUS_FUZZ_CHECK(id >= 0);
        (void)mw;
        (void)block;
        break;
      }
      case 1: {
        const auto claims = zeus::zeusd::verify_token(kKey, text, kNow);
        ZEUS_FUZZ_CHECK(!claims.exp ||
                        *claims.exp >= kNow - zeus::zeusd::kTokenExpiryLeewaySeconds);
        const auto again =
            zeus::zeusd::verify_token(kKey, zeus::zeusd::issue_token(kKey, claims), kNow);
        ZEUS_FUZZ_CHECK(again.sub == claims.sub && again.scopes == claims.scopes &&
                        again.exp == claims.exp);
        break;
      }
      default: {
        const auto o = zeus::zeusd::CommandOverrides::parse(std::string(text), "fuzz.toml");
        for (const auto& name : o.operation_names()) ZEUS_FUZZ_CHECK(!name.empty());
        break;
      }
    }
    zeus::fuzz::accepted();
  } catch (const zeus::Error&) {
  }
  return 0;
}
