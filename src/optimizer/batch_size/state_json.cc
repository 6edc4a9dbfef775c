#include "optimizer/batch_size/state_json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>

#include "zeus/util/error.h"

namespace zeus::batch_size {
namespace {

using nlohmann::json;

json encode_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double decode_double(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  throw_error(
      ErrorCode::kParse,
      "batch-size search state: expected a number or \"inf\"/\"-inf\"/\"nan\", got " + j.dump());
}

const json& field(const json& j, const char* name) {
  if (!j.is_object() || !j.contains(name)) {
    throw_error(ErrorCode::kParse,
                fmt::format("batch-size search state: missing field '{}'", name));
  }
  return j.at(name);
}

// Runs a reader, turning nlohmann's type errors into kParse.
template <class Fn>
auto parsing(const char* what, Fn&& fn) {
  try {
    return fn();
  } catch (const json::exception& e) {
    throw_error(ErrorCode::kParse,
                fmt::format("batch-size search state: malformed {}: {}", what, e.what()));
  }
}

std::uint64_t parse_hex_word(const std::string& s) {
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
    throw_error(ErrorCode::kParse, "RNG state: malformed word '" + s + "'");
  }
  std::uint64_t v = 0;
  for (std::size_t k = 2; k < s.size(); ++k) {
    const char c = s[k];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      throw_error(ErrorCode::kParse, "RNG state: malformed word '" + s + "'");
    }
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  return v;
}

}  // namespace

json rng_to_json(const Rng& rng) {
  json words = json::array();
  for (auto w : rng.state()) words.push_back(fmt::format("0x{:016x}", w));
  return {{"algorithm", "xoshiro256**"}, {"state", words}};
}

Rng rng_from_json(const json& j) {
  if (!j.is_object() || !j.contains("algorithm") || j["algorithm"] != "xoshiro256**") {
    throw_error(ErrorCode::kParse,
                "RNG state: expected {\"algorithm\":\"xoshiro256**\",\"state\":[4 hex words]}");
  }
  const auto& st = field(j, "state");
  if (!st.is_array() || st.size() != 4) {
    throw_error(ErrorCode::kParse, "RNG state: state must be an array of 4 words");
  }
  std::array<std::uint64_t, 4> words{};
  for (std::size_t i = 0; i < 4; ++i) {
    if (!st[i].is_string()) throw_error(ErrorCode::kParse, "RNG state: words must be hex strings");
    words[i] = parse_hex_word(st[i].get<std::string>());
  }
  try {
    return Rng::from_state(words);
  } catch (const Error& e) {
    throw_error(ErrorCode::kParse, e.what());
  }
}

json explorer_to_json(const PruningExplorer& p) {
  json hist = json::array();
  for (const auto& [b, list] : p.history()) {
    for (const auto& e : list) {
      hist.push_back({{"batch_size", b},
                      {"trial_id", e.trial_id},
                      {"done", e.done},
                      {"converged", e.converged},
                      {"cost", encode_double(e.cost.value())}});
    }
  }
  return {{"batch_sizes", p.batch_sizes()},
          {"default_batch_size", p.default_batch_size()},
          {"num_rounds", p.num_rounds()},
          {"history", hist}};
}

PruningExplorer explorer_from_json(const json& j) {
  return parsing("explorer", [&] {
    PruningExplorer::History history;
    for (const auto& e : field(j, "history")) {
      PruningExplorer::Exploration x;
      x.trial_id = field(e, "trial_id").get<std::int64_t>();
      x.done = field(e, "done").get<bool>();
      x.converged = field(e, "converged").get<bool>();
      x.cost = Joules(decode_double(field(e, "cost")));
      history[field(e, "batch_size").get<int>()].push_back(x);
    }
    return PruningExplorer(field(j, "batch_sizes").get<std::vector<int>>(),
                           field(j, "default_batch_size").get<int>(),
                           field(j, "num_rounds").get<int>(), std::move(history));
  });
}

json bandit_to_json(const GaussianThompsonSampling& ts) {
  json arms = json::array();
  for (const auto& a : ts.arms()) {
    json rewards = json::array();
    for (const Joules r : a.rewards) rewards.push_back(encode_double(r.value()));
    arms.push_back({{"batch_size", a.batch_size},
                    {"rewards", rewards},
                    {"mean", encode_double(a.mean)},
                    {"precision", encode_double(a.precision)},
                    {"reward_precision", encode_double(a.reward_precision)}});
  }
  const auto& o = ts.options();
  return {{"prior_mean", encode_double(o.prior_mean)},
          {"prior_precision", encode_double(o.prior_precision)},
          {"num_explorations", o.num_explorations},
          {"window_size", o.window_size},
          {"arms", arms}};
}

GaussianThompsonSampling bandit_from_json(const json& j) {
  return parsing("bandit", [&] {
    GaussianTsOptions o;
    o.prior_mean = decode_double(field(j, "prior_mean"));
    o.prior_precision = decode_double(field(j, "prior_precision"));
    o.num_explorations = field(j, "num_explorations").get<int>();
    o.window_size = field(j, "window_size").get<int>();
    std::vector<GaussianArm> arms;
    for (const auto& ja : field(j, "arms")) {
      GaussianArm a;
      a.batch_size = field(ja, "batch_size").get<int>();
      for (const auto& r : field(ja, "rewards")) a.rewards.push_back(Joules(decode_double(r)));
      // Stored, not refitted: the restored object must equal the saved one bit for bit.
      a.mean = decode_double(field(ja, "mean"));
      a.precision = decode_double(field(ja, "precision"));
      a.reward_precision = decode_double(field(ja, "reward_precision"));
      arms.push_back(std::move(a));
    }
    return GaussianThompsonSampling::restore(o, std::move(arms));
  });
}

json search_to_json(const BatchSizeSearch& s) {
  const auto& o = s.options();
  const auto& st = s.state();
  json flight = json::array();
  for (const auto& [id, t] : st.in_flight) {
    flight.push_back({{"id", id}, {"batch_size", t.batch_size}, {"kind", trial_kind_name(t.kind)}});
  }
  json costs = json::array();
  for (const auto& [b, list] : st.pruning_costs) {
    json c = json::array();
    for (const Joules x : list) c.push_back(encode_double(x.value()));
    costs.push_back({{"batch_size", b}, {"costs", c}});
  }
  return {{"version", 1},
          {"options",
           {{"batch_sizes", o.batch_sizes},
            {"default_batch_size", o.default_batch_size},
            {"num_pruning_rounds", o.num_pruning_rounds},
            {"prior_mean", encode_double(o.mab.prior_mean)},
            {"prior_precision", encode_double(o.mab.prior_precision)},
            {"num_explorations", o.mab.num_explorations},
            {"window_size", o.mab.window_size},
            {"seed", fmt::format("{}", o.seed)},
            {"fail_on_round_without_survivor", o.fail_on_round_without_survivor}}},
          {"stage", st.stage == SearchStage::kPruning ? "pruning" : "sampling"},
          {"explorer", explorer_to_json(s.explorer())},
          {"bandit", s.bandit() ? bandit_to_json(*s.bandit()) : json(nullptr)},
          {"rng", rng_to_json(st.rng)},
          {"next_trial_id", st.next_trial_id},
          {"in_flight", flight},
          {"pruning_costs", costs},
          {"min_cost", encode_double(st.min_cost.value())},
          {"min_cost_batch_size", st.min_cost_batch_size}};
}

BatchSizeSearch search_from_json(const json& j) {
  return parsing("search", [&] {
    if (field(j, "version").get<int>() != 1) {
      throw_error(ErrorCode::kParse,
                  "batch-size search state: unsupported version " + j["version"].dump());
    }
    const auto& o = field(j, "options");
    BatchSizeSearchOptions opt;
    opt.batch_sizes = field(o, "batch_sizes").get<std::vector<int>>();
    opt.default_batch_size = field(o, "default_batch_size").get<int>();
    opt.num_pruning_rounds = field(o, "num_pruning_rounds").get<int>();
    opt.mab.prior_mean = decode_double(field(o, "prior_mean"));
    opt.mab.prior_precision = decode_double(field(o, "prior_precision"));
    opt.mab.num_explorations = field(o, "num_explorations").get<int>();
    opt.mab.window_size = field(o, "window_size").get<int>();
    const auto seed_text = field(o, "seed").get<std::string>();
    std::size_t used = 0;
    try {
      opt.seed = std::stoull(seed_text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != seed_text.size()) {
      throw_error(ErrorCode::kParse,
                  "batch-size search state: the seed is not an unsigned integer");
    }
    opt.fail_on_round_without_survivor = o.value("fail_on_round_without_survivor", false);
    const auto stage_text = field(j, "stage").get<std::string>();
    if (stage_text != "pruning" && stage_text != "sampling") {
      throw_error(ErrorCode::kParse, "batch-size search state: unknown stage '" + stage_text + "'");
    }
    BatchSizeSearch::State st;
    st.stage = stage_text == "pruning" ? SearchStage::kPruning : SearchStage::kSampling;
    std::optional<GaussianThompsonSampling> bandit;
    if (st.stage == SearchStage::kSampling) bandit.emplace(bandit_from_json(field(j, "bandit")));
    st.rng = rng_from_json(field(j, "rng"));
    st.next_trial_id = field(j, "next_trial_id").get<std::int64_t>();
    for (const auto& t : field(j, "in_flight")) {
      Trial x{field(t, "id").get<std::int64_t>(), field(t, "batch_size").get<int>(),
              parse_trial_kind(field(t, "kind").get<std::string>())};
      st.in_flight.emplace(x.id, x);
    }
    for (const auto& c : field(j, "pruning_costs")) {
      auto& list = st.pruning_costs[field(c, "batch_size").get<int>()];
      for (const auto& x : field(c, "costs")) list.push_back(Joules(decode_double(x)));
    }
    st.min_cost = Joules(decode_double(field(j, "min_cost")));
    st.min_cost_batch_size = field(j, "min_cost_batch_size").get<int>();
    return BatchSizeSearch::restore(std::move(opt), explorer_from_json(field(j, "explorer")),
                                    std::move(bandit), std::move(st));
  });
}

}  // namespace zeus::batch_size
