#include "zeus/sim/report.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "util/csv.h"
#include "zeus/util/files.h"

namespace zeus::sim {

namespace {

std::string watts(Milliwatts mw) { return fmt::format("{}", to_watts(mw).value()); }

// Mean over seeds of one strategy's metrics for one (gpu, eta, workload).
struct Cell {
  double eta = 0, tta = 0, regret = 0;
  int n = 0;
};
struct Group {
  std::string gpu, workload;
  double eta;
  int b0;
  Reference ref;
  std::map<Strategy, Cell> cells;
};

std::vector<Group> group_rows(const std::vector<SweepRow>& rows) {
  std::vector<Group> groups;
  std::map<std::tuple<std::string, std::string, double>, std::size_t> index;
  for (const auto& r : rows) {
    const auto key = std::make_tuple(r.gpu, r.workload, r.eta);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, groups.size()).first;
      groups.push_back({r.gpu, r.workload, r.eta, r.default_batch_size, r.reference, {}});
    }
    Cell& c = groups[it->second].cells[r.strategy];
    c.eta += r.summary.eta_norm;
    c.tta += r.summary.tta_norm;
    c.regret += r.summary.cum_regret.value();
    ++c.n;
  }
  for (auto& g : groups) {
    for (auto& [k, c] : g.cells) {
      c.eta /= c.n;
      c.tta /= c.n;
      c.regret /= c.n;
    }
  }
  return groups;
}

std::string cell_or_dash(const Group& g, Strategy k, double Cell::*field) {
  const auto it = g.cells.find(k);
  return it == g.cells.end() ? "-" : fmt::format("{:.3f}", it->second.*field);
}

}  // namespace

std::string format_csv(const std::vector<SweepRow>& rows) {
  std::string out =
      "gpu,workload,eta,beta,seed,strategy,early_stopping,b0,num_recurrence,opt_bs,opt_pl,"
      "opt_cost,default_eta,default_tta,eta_norm,tta_norm,cum_regret,cum_regret_rel,final_bs,"
      "final_pl\n";
  for (const auto& r : rows) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_escape(r.gpu),
        csv_escape(r.workload), r.eta, r.beta, r.seed, strategy_name(r.strategy),
        uses_early_stopping(r.strategy) ? "true" : "false", r.default_batch_size, r.num_recurrence,
        r.reference.opt_batch_size, watts(r.reference.opt_power_limit),
        r.reference.opt_cost.value(), r.reference.default_eta.value(),
        r.reference.default_tta.count(), r.summary.eta_norm, r.summary.tta_norm,
        r.summary.cum_regret.value(), r.summary.cum_regret_rel, r.summary.final_batch_size,
        watts(r.summary.final_power_limit));
  }
  return out;
}

std::string format_json(const std::vector<SweepRow>& rows) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : rows) {
    arr.push_back({{"gpu", r.gpu},
                   {"workload", r.workload},
                   {"eta", r.eta},
                   {"beta", r.beta},
                   {"seed", r.seed},
                   {"strategy", strategy_name(r.strategy)},
                   {"early_stopping", uses_early_stopping(r.strategy)},
                   {"b0", r.default_batch_size},
                   {"num_recurrence", r.num_recurrence},
                   {"opt_bs", r.reference.opt_batch_size},
                   {"opt_pl", to_watts(r.reference.opt_power_limit).value()},
                   {"opt_cost", r.reference.opt_cost.value()},
                   {"default_eta", r.reference.default_eta.value()},
                   {"default_tta", r.reference.default_tta.count()},
                   {"eta_norm", r.summary.eta_norm},
                   {"tta_norm", r.summary.tta_norm},
                   {"cum_regret", r.summary.cum_regret.value()},
                   {"cum_regret_rel", r.summary.cum_regret_rel},
                   {"final_bs", r.summary.final_batch_size},
                   {"final_pl", to_watts(r.summary.final_power_limit).value()}});
  }
  return nlohmann::json{{"rows", arr}}.dump(2) + "\n";
}

std::string format_table(const std::vector<SweepRow>& rows) {
  const auto groups = group_rows(rows);
  std::string out;
  std::string current;
  int nseeds = 0;
  for (const auto& g : groups) {
    for (const auto& [k, c] : g.cells) nseeds = std::max(nseeds, c.n);
  }
  for (const auto& g : groups) {
    const std::string header = fmt::format("{} eta={}", g.gpu, g.eta);
    if (header != current) {
      current = header;
      out += fmt::format(
          "\n{} (beta={}, mean of {} seed(s); ETA/TTA = last 5 recurrences / expected Default)\n",
          header, rows.front().beta, nseeds);
      out += fmt::format("{:<30} {:>5} {:>11} {:>9} {:>9} {:>9} {:>9} {:>12}\n", "workload", "b0",
                         "optimum", "ETA zeus", "ETA grid", "TTA zeus", "TTA grid", "regret g/z");
    }
    std::string ratio = "-";
    const auto z = g.cells.find(Strategy::kZeus);
    const auto gr = g.cells.find(Strategy::kGrid);
    if (z != g.cells.end() && gr != g.cells.end() && z->second.regret != 0) {
      ratio = fmt::format("{:.2f}", gr->second.regret / z->second.regret);
    }
    out += fmt::format(
        "{:<30} {:>5} {:>11} {:>9} {:>9} {:>9} {:>9} {:>12}\n", g.workload, g.b0,
        fmt::format("{}@{}W", g.ref.opt_batch_size, to_watts(g.ref.opt_power_limit).value()),
        cell_or_dash(g, Strategy::kZeus, &Cell::eta), cell_or_dash(g, Strategy::kGrid, &Cell::eta),
        cell_or_dash(g, Strategy::kZeus, &Cell::tta), cell_or_dash(g, Strategy::kGrid, &Cell::tta),
        ratio);
  }
  return out.empty() ? out : out.substr(1);
}

std::string format_trajectory_csv(const std::vector<SweepRow>& rows) {
  std::string out =
      "gpu,workload,eta,beta,seed,strategy,recurrence,batch_size,power_limit,runs,energy,time,"
      "cost,regret,cum_regret\n";
  for (const auto& r : rows) {
    if (!r.result) continue;
    Joules cum{0.0};
    const auto& recs = r.result->recurrences;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      const auto& x = recs[i];
      const bool drifted = r.drift_at >= 0 && static_cast<int>(i) >= r.drift_at;
      const Joules regret = x.cost - (drifted ? r.reference.opt_cost : r.initial_opt_cost);
      cum += regret;
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_escape(r.gpu),
                         csv_escape(r.workload), r.eta, r.beta, r.seed, strategy_name(r.strategy),
                         i + 1, x.batch_size, watts(x.power_limit), x.runs, x.energy.value(),
                         x.time.count(), x.cost.value(), regret.value(), cum.value());
    }
  }
  return out;
}

void write_outputs(const std::string& dir, const std::vector<SweepRow>& rows) {
  write_file_atomically(dir + "/results.csv", format_csv(rows));
  write_file_atomically(dir + "/trajectory.csv", format_trajectory_csv(rows));
  write_file_atomically(dir + "/summary.txt", format_table(rows));
}

}  // namespace zeus::sim
