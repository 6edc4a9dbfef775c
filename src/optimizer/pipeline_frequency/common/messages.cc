#include "zeus/optimizer/pipeline_frequency/common/messages.h"

#include <fmt/format.h>

#include <ctime>

#include "util/json.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

namespace {

using nlohmann::json;

// Bounds on measurements: beyond them a report is not describing an iteration.
constexpr double kMaxSeconds = 1e7;
constexpr double kMaxJoules = 1e12;
constexpr std::int64_t kMaxFrequencyMhz = 100'000;
constexpr std::size_t kMaxInstructionName = 64;

[[noreturn]] void bad(ErrorCode code, const std::string& source, const std::string& field,
                      const std::string& what) {
  throw FieldError(code, field, fmt::format("{}: {}: {}", source, field, what));
}

int rank_field(const JsonObject& o, std::string_view key) {
  return static_cast<int>(o.integer(key, 0, kMaxWorldSize - 1));
}

void check_metadata(const std::string& m, const std::string& source) {
  for (const char c : m) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '/' || c == '?' || c == '#' || c == '%') {
      bad(ErrorCode::kInvalidArgument, source, "job_metadata",
          fmt::format("'{}' may not contain '/', '?', '#', '%' or control characters: it "
                      "becomes part of the job id, a URL path segment and a directory name",
                      printable(m)));
    }
  }
}

// A list of lists of non-negative numbers in [0, max] (a breakdown value).
template <class Unit>
std::vector<std::vector<Unit>> number_lists(const json& v, const std::string& source,
                                            const std::string& field, double max) {
  if (!v.is_array()) bad(ErrorCode::kParse, source, field, "expected a list of lists of numbers");
  std::vector<std::vector<Unit>> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string f = fmt::format("{}[{}]", field, i);
    if (!v[i].is_array()) bad(ErrorCode::kParse, source, f, "expected a list of numbers");
    auto& row = out.emplace_back();
    row.reserve(v[i].size());
    for (std::size_t k = 0; k < v[i].size(); ++k) {
      row.emplace_back(
          JsonObject::check_number(v[i][k], source, fmt::format("{}[{}]", f, k), 0.0, max));
    }
  }
  return out;
}

template <class Unit>
std::map<std::string, std::vector<std::vector<Unit>>> breakdown(const JsonObject& o,
                                                                std::string_view key, double max) {
  std::map<std::string, std::vector<std::vector<Unit>>> out;
  if (!o.has(key)) return out;
  const json& v = o.required(key);
  if (!v.is_object()) {
    bad(ErrorCode::kParse, o.source(), o.field_path(key), "expected an object of lists");
  }
  for (const auto& [name, lists] : v.items()) {
    out.emplace(name, number_lists<Unit>(lists, o.source(),
                                         fmt::format("{}.{}", o.field_path(key), name), max));
  }
  return out;
}

template <class Unit>
json lists_to_json(const std::vector<std::vector<Unit>>& lists) {
  json out = json::array();
  for (const auto& row : lists) {
    json r = json::array();
    for (const auto& x : row) {
      if constexpr (std::is_same_v<Unit, Seconds>) {
        r.push_back(x.count());
      } else {
        r.push_back(x.value());
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

json parse_body(std::string_view body, const std::string& source) {
  return parse_json(body, source);
}

// Percent-encodes all but RFC 3986 unreserved characters and '+' (which job
// ids are full of and which means itself in a path).
std::string encode_path_segment(std::string_view text) { return percent_encode(text, "+"); }

}  // namespace

std::string job_path(std::string_view path, std::string_view job_id) {
  std::string out(path);
  const auto at = out.find("{job_id}");
  if (at != std::string::npos) out.replace(at, 8, encode_path_segment(job_id));
  return out;
}

JobInfo parse_job_info(std::string_view body) {
  const std::string source = "register_job body";
  const json doc = parse_body(body, source);
  const JsonObject o(doc, source);
  JobInfo info;
  if (o.has("job_id")) {
    info.job_id = o.string("job_id", 1024);
    if (!info.job_id.empty()) {
      bad(ErrorCode::kInvalidArgument, source, "job_id",
          "must be empty when registering: the server assigns the job id");
    }
  }
  info.pp_degree = static_cast<int>(o.integer("pp_degree", 1, kMaxWorldSize));
  info.dp_degree = static_cast<int>(o.integer("dp_degree", 1, kMaxWorldSize));
  info.tp_degree = static_cast<int>(o.integer("tp_degree", 1, kMaxWorldSize));
  info.world_size = static_cast<int>(o.integer("world_size", 1, kMaxWorldSize));
  const auto product = static_cast<std::int64_t>(info.pp_degree) * info.dp_degree * info.tp_degree;
  if (product != info.world_size) {
    bad(ErrorCode::kInvalidArgument, source, "world_size",
        fmt::format("{} is not pp_degree x dp_degree x tp_degree = {} x {} x {} = {}",
                    info.world_size, info.pp_degree, info.dp_degree, info.tp_degree, product));
  }
  if (o.has("job_metadata")) {
    info.job_metadata = o.string("job_metadata", kMaxMetadataBytes);
    check_metadata(*info.job_metadata, source);
  }
  return info;
}

RankInfo parse_rank_info(std::string_view body) {
  const std::string source = "register_rank body";
  const json doc = parse_body(body, source);
  const JsonObject o(doc, source);
  RankInfo info;
  info.rank = rank_field(o, "rank");
  info.dp_rank = rank_field(o, "dp_rank");
  info.pp_rank = rank_field(o, "pp_rank");
  info.tp_rank = rank_field(o, "tp_rank");
  for (const auto f : o.integers("available_frequencies", 0, kMaxFrequencyMhz)) {
    info.available_frequencies.emplace_back(f);
  }
  if (info.available_frequencies.size() > kMaxAvailableFrequencies) {
    bad(ErrorCode::kInvalidArgument, source, "available_frequencies",
        fmt::format("has {} entries; a GPU has at most a few hundred graphics clocks (limit {})",
                    info.available_frequencies.size(), kMaxAvailableFrequencies));
  }
  return info;
}

FrequencySchedule parse_frequency_schedule(std::string_view body) {
  const std::string source = "frequency schedule";
  const json doc = parse_body(body, source);
  const JsonObject o(doc, source);
  FrequencySchedule s;
  s.rank = rank_field(o, "rank");
  const json& list = o.required("frequencies");
  if (!list.is_array()) bad(ErrorCode::kParse, source, "frequencies", "expected a list of pairs");
  s.frequencies.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string f = fmt::format("frequencies[{}]", i);
    const json& pair = list[i];
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) {
      bad(ErrorCode::kParse, source, f, "expected [instruction name, frequency in MHz]");
    }
    const auto& name = pair[0].get_ref<const std::string&>();
    if (name.size() > kMaxInstructionName) {
      bad(ErrorCode::kInvalidArgument, source, f, "instruction name is too long");
    }
    s.frequencies.push_back(ScheduleEntry{
        name,
        Megahertz(JsonObject::check_integer(pair[1], source, f + "[1]", 0, kMaxFrequencyMhz))});
  }
  return s;
}

ProfilingResult parse_profiling_result(std::string_view body) {
  const std::string source = "result body";
  const json doc = parse_body(body, source);
  const JsonObject o(doc, source);
  ProfilingResult r;
  r.rank = rank_field(o, "rank");
  for (const double t : o.numbers("iter_time", 0.0, kMaxSeconds)) r.iter_time.emplace_back(t);
  for (const double e : o.numbers("iter_energy", 0.0, kMaxJoules)) r.iter_energy.emplace_back(e);
  r.time_breakdown = breakdown<Seconds>(o, "time_breakdown", kMaxSeconds);
  r.energy_breakdown = breakdown<Joules>(o, "energy_breakdown", kMaxJoules);
  return r;
}

json to_json(const JobInfo& info) {
  return json{{"job_id", info.job_id},
              {"pp_degree", info.pp_degree},
              {"dp_degree", info.dp_degree},
              {"tp_degree", info.tp_degree},
              {"world_size", info.world_size},
              {"job_metadata", info.job_metadata ? json(*info.job_metadata) : json(nullptr)}};
}

json to_json(const RankInfo& info) {
  json freqs = json::array();
  for (const auto f : info.available_frequencies) freqs.push_back(f.value());
  return json{{"rank", info.rank},
              {"dp_rank", info.dp_rank},
              {"pp_rank", info.pp_rank},
              {"tp_rank", info.tp_rank},
              {"available_frequencies", std::move(freqs)}};
}

json to_json(const FrequencySchedule& schedule) {
  json list = json::array();
  for (const auto& e : schedule.frequencies) {
    list.push_back(json::array({e.instruction, e.frequency.value()}));
  }
  return json{{"rank", schedule.rank}, {"frequencies", std::move(list)}};
}

json to_json(const ProfilingResult& result) {
  json times = json::array(), energies = json::array();
  for (const auto t : result.iter_time) times.push_back(t.count());
  for (const auto e : result.iter_energy) energies.push_back(e.value());
  json tb = json::object(), eb = json::object();
  for (const auto& [name, lists] : result.time_breakdown) tb[name] = lists_to_json(lists);
  for (const auto& [name, lists] : result.energy_breakdown) eb[name] = lists_to_json(lists);
  return json{{"rank", result.rank},
              {"iter_time", std::move(times)},
              {"iter_energy", std::move(energies)},
              {"time_breakdown", std::move(tb)},
              {"energy_breakdown", std::move(eb)}};
}

std::string make_job_id(const JobInfo& info, std::string_view scheduler_name,
                        std::chrono::system_clock::time_point when) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm local{};
  localtime_r(&t, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%F-%H-%M-%S", &local);
  std::string id = fmt::format("{}+dp{}+pp{}+tp{}+{}", stamp, info.dp_degree, info.pp_degree,
                               info.tp_degree, scheduler_name);
  if (info.job_metadata && !info.job_metadata->empty()) id += "+" + *info.job_metadata;
  return id;
}

}  // namespace zeus::pipeline_frequency
