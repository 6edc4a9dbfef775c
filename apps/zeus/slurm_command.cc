// `zeus slurm report`: per-job energy from the SPANK plugin's step records
// (docs/slurm.md). Parses flags and prints; reading and summing the records
// is the library's (src/integrations/slurm/report.h).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "command_registry.h"
#include "integrations/slurm/report.h"
#include "util/iso8601.h"
#include "zeus/util/error.h"

namespace zeus::cli::slurm_command {
namespace {

struct ReportFlags {
  std::string records = "/var/lib/zeus/slurm";
  std::string job;
  std::string user;
  std::string since;
  bool json = false;
  std::optional<double> carbon_intensity;
  std::optional<double> price;
};

void report(const ReportFlags& f) {
  slurm::ReportFilter filter;
  if (!f.job.empty()) filter.job = f.job;
  if (!f.user.empty()) filter.user = f.user;
  if (!f.since.empty()) filter.since = static_cast<double>(parse_iso8601(f.since, "--since"));
  std::vector<std::string> skipped;
  const auto records = slurm::read_step_records(f.records, &skipped);
  for (const auto& s : skipped) fmt::print(stderr, "zeus: skipping record {}\n", s);
  const auto jobs = slurm::summarize_jobs(records, filter);
  const slurm::Rates rates{f.carbon_intensity, f.price};
  if (f.json) {
    fmt::print("{}\n", slurm::report_json(jobs, rates).dump(2));
  } else {
    fmt::print("{}", slurm::render_report_table(jobs, rates));
  }
  if (std::fflush(stdout) != 0) throw_error(ErrorCode::kIo, "cannot write to stdout");
}

std::string check_rate(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0 && v <= 1e6)) {
    return fmt::format("'{}' is not a rate in [0, 1e6]", text);
  }
  return "";
}

void setup(CLI::App& root) {
  auto* slurm = root.add_subcommand("slurm", "Energy of Slurm jobs (the spank_zeus plugin)");
  slurm->require_subcommand(1);
  auto f = std::make_shared<ReportFlags>();
  auto* cmd = slurm->add_subcommand(
      "report",
      "Per job: duration, GPU-hours, GPU and CPU active energy, idle share (and carbon, cost) "
      "from the plugin's step records on this node");
  cmd->add_option("--records", f->records, "The plugin's records directory (its records= option)")
      ->capture_default_str();
  cmd->add_option("--job", f->job, "Only this job (an array's id: all its elements)");
  cmd->add_option("--user", f->user, "Only this user's jobs (name or uid)");
  cmd->add_option("--since", f->since,
                  "Only jobs that ended at or after this time (ISO 8601, or Unix seconds)");
  cmd->add_flag("--json", f->json, "JSON instead of a table");
  cmd->add_option("--carbon-intensity", f->carbon_intensity,
                  "Constant carbon intensity in gCO2eq/kWh: adds each job's emissions")
      ->check(check_rate);
  cmd->add_option("--price", f->price, "Constant electricity price per kWh: adds each job's cost")
      ->check(check_rate);
  cmd->footer(
      "Energies are the jobs' shares of the node's measured energy (docs/slurm.md); '*' marks a "
      "job with a step whose energy is missing (its sum counts only the steps measured).\n"
      "Example:\n  zeus slurm report --user alice --since 2025-01-01 --carbon-intensity 400");
  cmd->callback([f] { report(*f); });
}

const bool registered = zeus::cli::register_command(23, &setup);

}  // namespace
}  // namespace zeus::cli::slurm_command
