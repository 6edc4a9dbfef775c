// parse_policy: the policy names `zeus simulate chase --policy` accepts, and
// the fields each one fixes before a replay.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "synthetic_job_helpers.h"
#include "zeus/sim/carbon_aware/replay.h"
#include "zeus/util/error.h"

namespace zeus::sim::carbon_aware {
namespace {

using ::testing::HasSubstr;
using testing::three_limit_profile;

TEST(ChasePolicySpec, AcceptedFormsGiveTheirKindAndFields) {
  const Policy max = parse_policy("max");
  EXPECT_EQ(max.kind, Policy::Kind::kMax);
  EXPECT_EQ(max.spec, "max");

  const Policy fixed = parse_policy("limit:250");
  EXPECT_EQ(fixed.kind, Policy::Kind::kFixed);
  EXPECT_EQ(fixed.fixed, Milliwatts(250'000));
  EXPECT_EQ(fixed.spec, "limit:250");
  // Watts with a fraction become milliwatts, rounded (not truncated).
  EXPECT_EQ(parse_policy("limit:212.5").fixed, Milliwatts(212'500));
  EXPECT_EQ(parse_policy("limit:99.9996").fixed, Milliwatts(100'000));

  // The static selectors carry their argument: on the synthetic profile
  // zeus-cost picks 300 W below eta 0.6 and 200 W above 6/7, and
  // max-slowdown:1.15 allows 1.15 x 1800 s = 2070 s, so 250 W (2000 s).
  const auto profile = three_limit_profile();
  const Policy cheap = parse_policy("zeus-cost:0.25");
  EXPECT_EQ(cheap.kind, Policy::Kind::kStatic);
  ASSERT_NE(cheap.selector, nullptr);
  EXPECT_EQ(cheap.selector->select(profile.per_epoch), Milliwatts(300'000));
  EXPECT_EQ(parse_policy("zeus-cost:0.95").selector->select(profile.per_epoch),
            Milliwatts(200'000));
  const Policy slow = parse_policy("max-slowdown:1.15");
  EXPECT_EQ(slow.kind, Policy::Kind::kStatic);
  ASSERT_NE(slow.selector, nullptr);
  EXPECT_EQ(slow.selector->select(profile.per_epoch), Milliwatts(250'000));

  const Policy chase = parse_policy("chase:0.25");
  EXPECT_EQ(chase.kind, Policy::Kind::kChase);
  EXPECT_DOUBLE_EQ(chase.eta, 0.25);
  EXPECT_EQ(chase.forecaster, "persistence");  // the documented default
  EXPECT_EQ(chase.spec, "chase:0.25");
  for (const std::string f : {"persistence", "linear", "svr", "oracle"}) {
    const Policy p = parse_policy("chase:0.3:" + f);
    EXPECT_EQ(p.kind, Policy::Kind::kChase) << f;
    EXPECT_DOUBLE_EQ(p.eta, 0.3) << f;
    EXPECT_EQ(p.forecaster, f);
  }
  EXPECT_DOUBLE_EQ(parse_policy("chase:0").eta, 0.0);
  EXPECT_DOUBLE_EQ(parse_policy("chase:1:oracle").eta, 1.0);
}

TEST(ChasePolicySpec, BadFormsAreInvalidArgumentsThatSayWhatIsAccepted) {
  const auto message_of = [](const std::string& spec) -> std::string {
    try {
      parse_policy(spec);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << spec << ": " << e.what();
      return e.what();
    }
    ADD_FAILURE() << "'" << spec << "' was accepted";
    return "";
  };
  // An unknown name, or a known one missing its argument (or given one it
  // does not take), lists every accepted form.
  for (const std::string spec : {"", "min", "maxx", "max:", "max:1", "limit", "limit:", "zeus-cost",
                                 "max-slowdown", "chase", "chase0.25", "oracle", "Max"}) {
    const std::string m = message_of(spec);
    EXPECT_THAT(m, HasSubstr("'" + spec + "'")) << spec;
    EXPECT_THAT(m, HasSubstr("max, limit:W, zeus-cost:ETA, max-slowdown:FACTOR or "
                             "chase:ETA[:persistence|linear|svr|oracle]"))
        << spec;
  }
  // A known form with a bad argument says which argument and what is wrong.
  EXPECT_THAT(message_of("limit:abc"), HasSubstr("limit:W"));
  EXPECT_THAT(message_of("limit:0"), HasSubstr("out of range"));
  EXPECT_THAT(message_of("chase:1.5"), HasSubstr("chase eta"));
  EXPECT_THAT(message_of("chase:-0.1"), HasSubstr("out of range"));
  EXPECT_THAT(message_of("chase:0.25:magic"),
              HasSubstr("unknown forecaster 'magic'; expected persistence, linear, svr or oracle"));
  EXPECT_THAT(message_of("chase:0.25:"), HasSubstr("unknown forecaster ''"));
  EXPECT_THAT(message_of("zeus-cost:2"), HasSubstr("eta must be in [0, 1]"));
  EXPECT_THAT(message_of("max-slowdown:0.9"), HasSubstr("factor must be >= 1.0"));
}

}  // namespace
}  // namespace zeus::sim::carbon_aware
