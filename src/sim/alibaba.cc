#include "zeus/sim/alibaba.h"

#include <fmt/format.h>
#include <lzma.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "sim/replay.h"
#include "util/csv.h"
#include "util/text.h"
#include "zeus/optimizer/batch_size/cost.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::sim {

namespace bs = zeus::batch_size;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string xz_decompress(const std::string& data, const std::string& path) {
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
    throw_error(ErrorCode::kInternal, "cannot start the xz decoder");
  }
  std::string out;
  std::string buf(1 << 16, '\0');
  s.next_in = reinterpret_cast<const std::uint8_t*>(data.data());
  s.avail_in = data.size();
  lzma_ret r = LZMA_OK;
  while (r == LZMA_OK) {
    s.next_out = reinterpret_cast<std::uint8_t*>(buf.data());
    s.avail_out = buf.size();
    r = lzma_code(&s, LZMA_FINISH);
    out.append(buf.data(), buf.size() - s.avail_out);
    if (out.size() > kMaxInputFileBytes) {
      lzma_end(&s);
      throw_error(ErrorCode::kInvalidArgument, fmt::format("{}: decompresses to more than {} bytes",
                                                           printable(path), kMaxInputFileBytes));
    }
  }
  lzma_end(&s);
  if (r != LZMA_STREAM_END) {
    throw_error(ErrorCode::kParse, fmt::format("{}: not a valid .xz file (liblzma error {})",
                                               printable(path), static_cast<int>(r)));
  }
  return out;
}

// One run in flight (upstream's RunningJob): its outcome is known at launch.
struct Running {
  double start_time;
  double end_time;
  double runtime_ratio;
  Decision decision;
  RunOutcome outcome;
  Joules cost;
  int attempt;  // 1 for a job's first run, +1 per retry
};

}  // namespace

std::vector<JobGroup> parse_group_trace(std::string_view csv, const std::string& source) {
  const CsvTable t = CsvTable::parse(csv, source);
  t.require_columns({"group", "start_time", "end_time", "dataset", "runtime_ratio"});
  const std::size_t cg = t.column("group"), cs = t.column("start_time"), ce = t.column("end_time"),
                    cd = t.column("dataset"), cr = t.column("runtime_ratio");
  std::vector<JobGroup> groups;
  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < t.num_rows(); ++r) {
    const std::string& g = t.cell(r, cg);
    const std::string& d = t.cell(r, cd);
    GroupJob j;
    j.start_time = t.as_finite_double(r, cs, 0.0, kMaxGroupTime);
    j.end_time = t.as_finite_double(r, ce, 0.0, kMaxGroupTime);
    j.runtime_ratio = t.as_finite_double(r, cr, 0.0, kMaxRuntimeRatio);
    auto bad = [&](const std::string& what) {
      throw_error(ErrorCode::kParse,
                  fmt::format("{}:{}: {}", printable(source), t.line_of(r), what));
    };
    if (g.empty()) bad("the group id is empty");
    if (!(j.end_time > j.start_time)) {
      bad(fmt::format("end_time {:g} is not after start_time {:g}", j.end_time, j.start_time));
    }
    if (!(j.runtime_ratio > 0)) bad("runtime_ratio must be positive");
    auto [it, fresh] = index.emplace(g, groups.size());
    if (fresh) groups.push_back({g, d, {}});
    JobGroup& group = groups[it->second];
    if (group.dataset != d) {
      bad(fmt::format("group {} has two datasets, {} and {}", printable(g),
                      printable(group.dataset), printable(d)));
    }
    group.jobs.push_back(j);
  }
  for (auto& g : groups) {
    std::stable_sort(g.jobs.begin(), g.jobs.end(), [](const GroupJob& a, const GroupJob& b) {
      return a.start_time < b.start_time;
    });
  }
  return groups;
}

std::vector<JobGroup> read_group_trace(const std::string& path) {
  std::string data = read_file(path);
  if (path.size() >= 3 && path.compare(path.size() - 3, 3, ".xz") == 0) {
    data = xz_decompress(data, path);
  }
  return parse_group_trace(data, path);
}

std::uint32_t adler32(std::string_view text) {
  constexpr std::uint32_t kMod = 65521;
  std::uint32_t a = 1, b = 0;
  for (unsigned char c : text) {
    a = (a + c) % kMod;
    b = (b + a) % kMod;
  }
  return (b << 16) | a;
}

SimResult simulate_group(const WorkloadTrace& t, const JobGroup& group, bs::Policy& policy,
                         const std::string& name, bool early_stopping, const SimOptions& o) {
  // The sequential replay checks the options; reuse its rules.
  if (!(o.eta >= 0.0 && o.eta <= 1.0)) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("eta must be in [0, 1], got {:g}", o.eta));
  }
  if (!(o.beta > 0.0)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("beta must be positive, got {:g}", o.beta));
  }
  const double beta = early_stopping ? o.beta : kInf;
  PolicyDriver driver(t, policy, name, o.eta);
  bs::Rng rng(o.seed, kPathStream);
  SimResult res;
  Joules min_cost{kInf};
  int best_bs = t.default_batch_size;
  std::vector<Running> running;

  // Starts a run at `start`..`end`: at the best-known batch size while others
  // are in flight, else at the policy's choice.
  auto launch = [&](double start, double end, double ratio, int attempt) {
    const Decision d =
        running.empty() ? driver.decide() : driver.decide_at(best_bs, bs::TrialKind::kConcurrent);
    const RunOutcome out = run_job(t, 0, d, bs::cost_upper_bound(beta, min_cost), o.eta, rng);
    running.push_back({start, end, ratio, d, out, cost_of(out, o.eta, t.max_power), attempt});
  };
  // Ends every run that finished by `now`, earliest first; a failed run is
  // retried at its end, which may itself end by `now`.
  auto reap = [&](double now) {
    for (;;) {
      std::vector<std::size_t> order;
      for (std::size_t i = 0; i < running.size(); ++i) {
        if (running[i].end_time <= now) order.push_back(i);
      }
      if (order.empty()) return;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return running[a].end_time < running[b].end_time;
      });
      bool relaunched = false;
      std::vector<std::size_t> done;
      for (std::size_t i : order) {
        const Running r = running[i];
        done.push_back(i);
        driver.observe(r.decision, r.cost, r.outcome.reached);
        if (!r.outcome.could_not_run()) {
          RunRecord rec;
          rec.batch_size = r.decision.batch_size();
          rec.power_limit = r.decision.power_limit;
          rec.energy = r.outcome.energy * r.runtime_ratio;
          rec.time = r.outcome.time * r.runtime_ratio;
          rec.cost = r.cost;
          rec.reached = r.outcome.reached;
          rec.profiled = r.decision.profile;
          rec.kind = r.decision.choice.kind;
          rec.start_time = Seconds(r.start_time);
          rec.others_in_flight = static_cast<int>(running.size()) - 1;
          res.runs.push_back(rec);
        }
        if (r.outcome.reached) {
          if (min_cost > r.cost) {
            min_cost = r.cost;
            best_bs = r.decision.batch_size();
          }
          continue;
        }
        if (r.attempt >= o.max_tries) {
          throw_error(
              ErrorCode::kInvalidArgument,
              fmt::format("policy '{}' on job {} on {}, group {}: a job failed {} tries in "
                          "a row (seed {}); the policy never reaches the target",
                          name, t.name(), t.gpu, printable(group.group), o.max_tries, o.seed));
        }
        // Remove what ended before launching, so "others in flight" is right.
        std::sort(done.rbegin(), done.rend());
        for (std::size_t k : done) running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        done.clear();
        launch(r.end_time, r.end_time + (r.end_time - r.start_time), r.runtime_ratio,
               r.attempt + 1);
        relaunched = true;
        break;  // the retry may be the next run to end
      }
      if (!relaunched) {
        std::sort(done.rbegin(), done.rend());
        for (std::size_t k : done) running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
  };

  for (const GroupJob& j : group.jobs) {
    reap(j.start_time);
    launch(j.start_time, j.end_time, j.runtime_ratio, 1);
  }
  reap(kInf);
  return res;
}

}  // namespace zeus::sim
