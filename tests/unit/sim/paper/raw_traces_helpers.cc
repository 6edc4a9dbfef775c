#include "raw_traces_helpers.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/csv.h"

namespace zeus::sim::raw {

namespace {

const std::string kDir = std::string(ZEUS_SOURCE_DIR) + "/data/zeus-traces";

const CsvTable& table(const std::string& file) {
  static std::map<std::string, CsvTable> cache;  // tests run one at a time per binary
  auto it = cache.find(file);
  if (it == cache.end()) it = cache.emplace(file, CsvTable::read_file(kDir + "/" + file)).first;
  return it->second;
}

bool converged(double epochs, int max_epochs) {
  return !std::isnan(epochs) && epochs <= static_cast<double>(max_epochs);
}

}  // namespace

double RawWorkload::mean_converged_epochs(int batch_size) const {
  double sum = 0;
  int n = 0;
  for (double e : epochs.at(batch_size)) {
    if (!converged(e, max_epochs)) continue;
    sum += e;
    ++n;
  }
  return n == 0 ? std::nan("") : sum / n;
}

bool RawWorkload::all_converge(int batch_size) const {
  const auto& runs = epochs.at(batch_size);
  return std::all_of(runs.begin(), runs.end(), [&](double e) { return converged(e, max_epochs); });
}

double RawWorkload::mean_epochs(int batch_size) const {
  const auto& runs = epochs.at(batch_size);
  double sum = 0;
  for (double e : runs) sum += e;
  return sum / static_cast<double>(runs.size());
}

double RawWorkload::eta_j(int batch_size, double limit_w) const {
  return mean_converged_epochs(batch_size) * limits.at(batch_size).at(limit_w).energy_per_epoch_j();
}

double RawWorkload::default_eta_j() const {
  const auto& top = limits.at(b0).rbegin()->second;
  return mean_epochs(b0) * top.energy_per_epoch_j();
}

double RawWorkload::default_tta_s() const {
  return mean_epochs(b0) * limits.at(b0).rbegin()->second.time_per_epoch_s;
}

double RawWorkload::epoch_cost(double eta, int batch_size, double limit_w) const {
  const RawLimit& l = limits.at(batch_size).at(limit_w);
  return eta * l.energy_per_epoch_j() + (1 - eta) * gpu_max_limit_w * l.time_per_epoch_s;
}

RawWorkload raw_workload(const std::string& gpu, const WorkloadSpec& spec) {
  RawWorkload w;
  w.max_epochs = spec.max_epochs;
  const CsvTable& power = table("summary_power_" + gpu + ".csv");
  const CsvTable& train = table("summary_train.csv");
  auto same_job = [&spec](const CsvTable& t, std::size_t r) {
    return t.cell(r, t.column("dataset")) == spec.dataset &&
           t.cell(r, t.column("network")) == spec.network &&
           t.cell(r, t.column("optimizer")) == spec.optimizer;
  };
  std::map<int, std::map<double, RawLimit>> limits;
  int largest = 0;
  for (std::size_t r = 0; r < power.num_rows(); ++r) {
    const double pl = power.as_double(r, power.column("power_limit"));
    w.gpu_max_limit_w = std::max(w.gpu_max_limit_w, pl);
    if (!same_job(power, r)) continue;
    const int bs = static_cast<int>(power.as_int(r, power.column("batch_size")));
    largest = std::max(largest, bs);
    limits[bs][pl] = {power.as_double(r, power.column("time_per_epoch")),
                      power.as_double(r, power.column("average_power"))};
  }
  std::map<int, std::vector<double>> epochs;
  for (std::size_t r = 0; r < train.num_rows(); ++r) {
    if (!same_job(train, r)) continue;
    if (train.as_double(r, train.column("target_metric")) != spec.target_metric) continue;
    const int bs = static_cast<int>(train.as_int(r, train.column("batch_size")));
    epochs[bs].push_back(train.as_double(r, train.column("target_epoch")));
  }
  for (auto& [bs, runs] : epochs) {
    if (limits.count(bs) == 0) continue;  // the inner join
    w.epochs[bs] = runs;
    w.limits[bs] = limits[bs];
  }
  w.b0 = std::min(spec.paper_default_batch_size, largest);
  return w;
}

RawOptimum raw_optimum(const RawWorkload& w, double eta) {
  RawOptimum best{std::numeric_limits<double>::infinity(), 0, 0};
  for (const auto& [bs, limits] : w.limits) {  // ascending batch size
    if (!w.all_converge(bs)) continue;
    const double epochs = w.mean_epochs(bs);
    for (auto it = limits.rbegin(); it != limits.rend(); ++it) {  // highest limit first
      const double c = epochs * w.epoch_cost(eta, bs, it->first);
      if (c < best.cost) best = {c, bs, it->first};
    }
  }
  return best;
}

}  // namespace zeus::sim::raw
