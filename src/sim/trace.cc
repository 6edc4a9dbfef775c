#include "zeus/sim/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "util/csv.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::sim {

const std::vector<WorkloadSpec>& paper_workloads() {
  static const std::vector<WorkloadSpec> specs = {
      {"cifar100", "shufflenetv2", "adadelta", 0.6, 100, 1024},
      {"imagenet", "resnet50", "adadelta", 0.65, 100, 256},
      {"squad", "bert_base_uncased", "adamw", 84.0, 6, 32},
      // run_single.py's b0 (run_alibaba.py says 256); every GPU caps it at <= 192.
      {"librispeech", "deepspeech2", "adamw", 40.0, 16, 192},
      {"movielens-1m", "ncf", "adam", 0.41, 100, 1024},
      {"sentiment140", "bert_base_uncased", "adamw", 0.84, 10, 128},
  };
  return specs;
}

const std::vector<std::string>& trace_gpus() {
  static const std::vector<std::string> gpus = {"v100", "a40", "p100", "rtx6000"};
  return gpus;
}

const WorkloadSpec& find_workload(const std::string& name) {
  std::string known;
  for (const auto& w : paper_workloads()) {
    if (w.name() == name || w.dataset == name) return w;
    known += (known.empty() ? "" : ", ") + w.name();
  }
  throw_error(
      ErrorCode::kNotFound,
      fmt::format("unknown workload '{}'; known workloads: {} (or 'all')", printable(name), known));
}

const PowerLimitPoint& BatchSizeTrace::at(Milliwatts pl) const& {
  for (const auto& p : limits) {
    if (p.power_limit == pl) return p;
  }
  throw_error(
      ErrorCode::kNotFound,
      fmt::format("batch size {} has no power limit {} mW in the trace", batch_size, pl.value()));
}

const BatchSizeTrace& WorkloadTrace::batch(int batch_size) const& {
  for (const auto& b : batch_sizes) {
    if (b.batch_size == batch_size) return b;
  }
  throw_error(ErrorCode::kNotFound,
              fmt::format("{} on {}: no batch size {} in the trace", name(), gpu, batch_size));
}

std::vector<int> WorkloadTrace::batch_size_list() const {
  std::vector<int> out;
  for (const auto& b : batch_sizes) out.push_back(b.batch_size);
  return out;
}

const std::vector<double>& WorkloadTrace::runs(const BatchSizeTrace& b, int recurrence) const& {
  if (drift_at && recurrence >= *drift_at) {
    const auto i = static_cast<std::size_t>(&b - batch_sizes.data());
    return drifted_target_epochs.at(i);
  }
  return b.target_epochs;
}

namespace {

std::string require_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("trace file '{}' does not exist; pass --traces DIR with the Zeus "
                            "traces (summary_train.csv, summary_power_<gpu>.csv)",
                            printable(path, 4096)));
  }
  return path;  // read_file refuses directories and special files
}

// The power files name their columns with or without a unit suffix.
std::size_t column_either(const CsvTable& t, const std::string& a, const std::string& b) {
  return t.has_column(a) ? t.column(a) : t.column(b);
}

int batch_size_at(const CsvTable& t, std::size_t r, std::size_t c) {
  const long long bs = t.as_int(r, c);
  if (bs < 1 || bs > kMaxTraceBatchSize) {
    throw_error(ErrorCode::kParse, fmt::format("{}:{}: batch_size must be 1..{}, got {}",
                                               t.source(), t.line_of(r), kMaxTraceBatchSize, bs));
  }
  return static_cast<int>(bs);
}

// A finite value in (0, max] (as_finite_double checks the range; zero is
// refused here because every one of these divides or multiplies a cost).
double positive_at(const CsvTable& t, std::size_t r, std::size_t c, double max) {
  const double v = t.as_finite_double(r, c, 0.0, max);
  if (!(v > 0.0)) {
    throw_error(ErrorCode::kParse, fmt::format("{}:{}: {} must be positive, got {:g}", t.source(),
                                               t.line_of(r), printable(t.columns()[c]), v));
  }
  return v;
}

}  // namespace

TraceSet TraceSet::load(const std::string& dir, const std::vector<std::string>& gpus) {
  const auto train = CsvTable::read_file(require_file(dir + "/summary_train.csv"));
  std::map<std::string, CsvTable> power;
  for (const auto& gpu : gpus) {
    power.emplace(gpu, CsvTable::read_file(require_file(dir + "/summary_power_" + gpu + ".csv")));
  }
  return from_tables(dir, train, power);
}

TraceSet TraceSet::parse(std::string_view train_csv,
                         const std::map<std::string, std::string>& power_csv,
                         const std::string& dir) {
  const auto train = CsvTable::parse(train_csv, dir + "/summary_train.csv");
  std::map<std::string, CsvTable> power;
  for (const auto& [gpu, text] : power_csv) {
    power.emplace(gpu, CsvTable::parse(text, dir + "/summary_power_" + gpu + ".csv"));
  }
  return from_tables(dir, train, power);
}

TraceSet TraceSet::from_tables(const std::string& dir, const CsvTable& train,
                               const std::map<std::string, CsvTable>& power) {
  TraceSet ts;
  ts.dir_ = dir;
  {
    const auto& t = train;
    t.require_columns(
        {"dataset", "network", "batch_size", "optimizer", "target_metric", "target_epoch"});
    const auto cd = t.column("dataset"), cn = t.column("network"), cb = t.column("batch_size"),
               co = t.column("optimizer"), cm = t.column("target_metric"),
               ce = t.column("target_epoch");
    ts.train_.reserve(t.num_rows());
    for (std::size_t r = 0; r < t.num_rows(); ++r) {
      // "nan" (literally) marks a run that never reached the target, and so
      // does an empty cell: what pandas writes for NaN, so a trace read with
      // pandas.read_csv and written back (or handed over as a DataFrame, as
      // upstream's drivers do) means the same.
      const bool blank = t.cell(r, ce).find_first_not_of(" \t") == std::string::npos;
      const double epoch = blank ? std::nan("") : t.as_double(r, ce);
      if (!std::isnan(epoch) && !(epoch >= 0.0 && epoch <= kMaxTraceTargetEpoch)) {
        throw_error(
            ErrorCode::kParse,
            fmt::format("{}:{}: target_epoch must be a number of epochs in [0, {:g}] or "
                        "'nan' or empty (never reached), got {}",
                        t.source(), t.line_of(r), kMaxTraceTargetEpoch, printable(t.cell(r, ce))));
      }
      TrainRow row{t.cell(r, cd),
                   t.cell(r, cn),
                   t.cell(r, co),
                   batch_size_at(t, r, cb),
                   t.as_finite_double(r, cm, -kMaxTraceTargetMetric, kMaxTraceTargetMetric),
                   epoch};
      ts.train_.push_back(std::move(row));
    }
  }
  for (const auto& [gpu, t] : power) {
    t.require_columns({"dataset", "network", "batch_size", "optimizer", "power_limit"});
    const auto cd = t.column("dataset"), cn = t.column("network"), cb = t.column("batch_size"),
               co = t.column("optimizer"), cp = t.column("power_limit");
    const auto ct = column_either(t, "time_per_epoch", "time_per_epoch [s]");
    const auto ca = column_either(t, "average_power", "average_power [W]");
    auto& rows = ts.power_[gpu];
    for (std::size_t r = 0; r < t.num_rows(); ++r) {
      PowerRow row{t.cell(r, cd),
                   t.cell(r, cn),
                   t.cell(r, co),
                   batch_size_at(t, r, cb),
                   to_milliwatts(Watts(positive_at(t, r, cp, kMaxTracePowerW))),
                   Seconds(positive_at(t, r, ct, kMaxTraceEpochTimeS)),
                   Watts(positive_at(t, r, ca, kMaxTracePowerW))};
      rows.push_back(std::move(row));
    }
    if (rows.empty()) {
      throw_error(ErrorCode::kParse, fmt::format("{}: the power trace has no rows", t.source()));
    }
  }
  return ts;
}

WorkloadTrace TraceSet::workload(const std::string& gpu, const WorkloadSpec& spec) const {
  const auto pit = power_.find(gpu);
  if (pit == power_.end()) {
    throw_error(ErrorCode::kNotFound, fmt::format("GPU '{}' has no loaded power trace", gpu));
  }
  const auto& power = pit->second;
  WorkloadTrace w;
  w.gpu = gpu;
  w.spec = spec;
  Milliwatts max_pl{0};
  for (const auto& p : power) max_pl = std::max(max_pl, p.power_limit);
  w.max_power = to_watts(max_pl);

  auto same_job = [&](const auto& r) {
    return r.dataset == spec.dataset && r.network == spec.network && r.optimizer == spec.optimizer;
  };
  std::map<int, BatchSizeTrace> by_bs;
  int largest_power_bs = 0;
  for (const auto& p : power) {
    if (!same_job(p)) continue;
    largest_power_bs = std::max(largest_power_bs, p.batch_size);
    auto& b = by_bs[p.batch_size];
    b.batch_size = p.batch_size;
    for (const auto& q : b.limits) {
      if (q.power_limit == p.power_limit) {
        throw_error(ErrorCode::kParse,
                    fmt::format("{}/summary_power_{}.csv: duplicate row for {} bs {} at {} W",
                                printable(dir_, 4096), gpu, spec.name(), p.batch_size,
                                to_watts(p.power_limit).value()));
      }
    }
    b.limits.push_back(
        {p.power_limit, p.time_per_epoch, p.average_power, p.time_per_epoch * p.average_power});
  }
  std::set<int> in_train;
  for (const auto& t : train_) {
    if (!same_job(t)) continue;
    in_train.insert(t.batch_size);
    if (t.target_metric == spec.target_metric) {
      const auto it = by_bs.find(t.batch_size);
      if (it != by_bs.end()) it->second.target_epochs.push_back(t.target_epoch);
    }
  }
  std::set<Milliwatts> limits;
  for (auto& [bs, b] : by_bs) {
    if (!in_train.count(bs)) continue;  // the inner join drops it
    if (b.target_epochs.empty()) {
      throw_error(ErrorCode::kParse,
                  fmt::format("{}/summary_train.csv: {} bs {} has no run with target {}",
                              printable(dir_, 4096), spec.name(), bs, spec.target_metric));
    }
    std::sort(b.limits.begin(), b.limits.end(),
              [](const auto& x, const auto& y) { return x.power_limit > y.power_limit; });
    Joules e{0.0};
    Seconds tm{0.0};
    for (const auto& p : b.limits) {
      e += p.energy_per_epoch;
      tm += p.time_per_epoch;
      limits.insert(p.power_limit);
    }
    b.profile_energy_per_epoch = e / static_cast<double>(b.limits.size());
    b.profile_time_per_epoch = tm / static_cast<double>(b.limits.size());
    w.batch_sizes.push_back(std::move(b));
  }
  if (w.batch_sizes.empty()) {
    throw_error(ErrorCode::kNotFound, fmt::format("workload {} has no rows on GPU {} in {}",
                                                  spec.name(), gpu, printable(dir_, 4096)));
  }
  w.num_power_limits = static_cast<int>(limits.size());
  w.num_recurrence = 2 * static_cast<int>(w.batch_sizes.size()) * w.num_power_limits;
  w.default_batch_size = std::min(spec.paper_default_batch_size, largest_power_bs);
  w.batch(w.default_batch_size);  // throws if the capped b0 is not replayable
  return w;
}

WorkloadTrace make_drifting_workload(int num_recurrence, int drift_at) {
  WorkloadTrace w;
  w.gpu = "synthetic";
  w.spec = {"synthetic", "drift", "none", 0.0, 40, 128};
  w.default_batch_size = 128;
  w.max_power = Watts(250.0);
  // Epochs to target per batch size, before and after the drift. Every batch
  // size has the same per-epoch cost, so these rank the batch sizes directly.
  const std::vector<std::pair<int, std::pair<int, int>>> epochs = {
      {32, {15, 20}}, {64, {10, 16}}, {128, {14, 14}}, {256, {12, 10}}, {512, {18, 18}}};
  auto runs = [](int e) {
    const double x = e;
    return std::vector<double>{x - 1, x, x, x + 1};
  };
  for (const auto& [bs, e] : epochs) {
    BatchSizeTrace b;
    b.batch_size = bs;
    for (int pl = 250; pl >= 150; pl -= 25) {
      const Seconds t(60.0 * std::sqrt(250.0 / pl));
      const Watts p(0.9 * pl);
      b.limits.push_back({Milliwatts(pl * 1000), t, p, p * t});
    }
    Joules se{0.0};
    Seconds st{0.0};
    for (const auto& p : b.limits) {
      se += p.energy_per_epoch;
      st += p.time_per_epoch;
    }
    b.profile_energy_per_epoch = se / static_cast<double>(b.limits.size());
    b.profile_time_per_epoch = st / static_cast<double>(b.limits.size());
    b.target_epochs = runs(e.first);
    w.drifted_target_epochs.push_back(runs(e.second));
    w.batch_sizes.push_back(std::move(b));
  }
  w.num_power_limits = 5;
  w.num_recurrence = num_recurrence;
  w.drift_at = drift_at;
  return w;
}

}  // namespace zeus::sim
