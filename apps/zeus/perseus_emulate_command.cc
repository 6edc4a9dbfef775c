// `zeus perseus emulate`: the closed loop (server, per-rank controllers and
// stage processes on emulated GPUs) against the frontier's predictions; and
// the hidden `zeus perseus emulate-stage` that runs one stage process.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command_registry.h"
#include "output_checks.h"
#include "util/text.h"
#include "zeus/optimizer/pipeline_frequency/emulation/emulation.h"
#include "zeus/optimizer/pipeline_frequency/emulation/stage_worker.h"
#include "zeus/optimizer/pipeline_frequency/planner/cost_model.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::cli::perseus_emulate_command {
namespace {

namespace fs = std::filesystem;
namespace pf = zeus::pipeline_frequency;

struct EmulateArgs {
  std::string profile;
  int microbatches = 12;
  double unit_time = 0.001;
  double p_blocking = 83.64;
  std::string cost_model = "exponential";
  int iterations = 2;
  double straggler = 1.25;
  double tolerance = 0.03;
  std::string out;
  bool plot = false;
  bool json = false;
};

struct StageArgs {
  int control = -1, previous = -1, next = -1;
};

// A directory that exists for the command's lifetime when --out is not given.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::string t = (fs::temp_directory_path() / "zeus_perseus_emulate_XXXXXX").string();
    if (::mkdtemp(t.data()) == nullptr) {
      zeus::throw_error(zeus::ErrorCode::kIo, "cannot create a temporary directory");
    }
    path = t;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void emulate(const EmulateArgs& a) {
  if (a.plot && a.out.empty()) {
    zeus::throw_error(zeus::ErrorCode::kInvalidArgument, "--plot needs --out DIR");
  }
  if (!a.out.empty()) zeus::cli::check_output_dir(a.out, "--out", {"report.json"});
  std::unique_ptr<ScratchDir> scratch;
  if (a.out.empty()) scratch = std::make_unique<ScratchDir>();
  pf::EmulationOptions o;
  o.profile = a.profile;
  o.microbatches = a.microbatches;
  o.unit_time = zeus::Seconds(a.unit_time);
  o.p_blocking = zeus::Watts(a.p_blocking);
  o.cost_model = zeus::pipeline_frequency::parse_cost_model(a.cost_model);
  o.iterations = a.iterations;
  o.straggler_slowdown = a.straggler;
  o.straggler_tolerance = a.tolerance;
  o.work_dir = a.out.empty() ? scratch->path : a.out;
  o.worker_command = {fs::read_symlink("/proc/self/exe").string(), "perseus", "emulate-stage"};
  const auto report = pf::run_emulation(o);
  const auto checks = pf::check_emulation(report, o.unit_time);
  bool all = true;
  for (const auto& c : checks) all = all && c.passed;
  if (!a.out.empty()) {
    zeus::write_file_atomically(a.out + "/report.json", pf::emulation_json(report));
    if (a.plot) pf::render_emulation_plot(report, a.out);
  }
  if (a.json) {
    std::fputs(pf::emulation_json(report).c_str(), stdout);
  } else {
    std::fputs(pf::emulation_table(report).c_str(), stdout);
    std::printf("\n");
    for (const auto& c : checks)
      std::printf("[%s] %s\n", c.passed ? " ok " : "FAIL", c.claim.c_str());
    if (!a.out.empty()) {
      std::printf("\nwrote %s/report.json%s (solution, server dumps: %s)\n",
                  zeus::printable(a.out, 4096).c_str(), a.plot ? " and emulation.png/.svg" : "",
                  zeus::printable(a.out, 4096).c_str());
    }
  }
  zeus::cli::flush_stdout();
  if (!all) {
    zeus::throw_error(
        zeus::ErrorCode::kInternal,
        "the closed loop did not reproduce the frontier's prediction (see FAIL above)");
  }
}

void setup(CLI::App& root) {
  auto* perseus = root.get_subcommand("perseus");
  auto a = std::make_shared<EmulateArgs>();
  auto* cmd = perseus->add_subcommand(
      "emulate",
      "Closed loop: solve the frontier, then run a 1F1B pipeline of one process per stage on "
      "emulated GPUs (each computation takes the profile's time and energy at the frequency "
      "actually locked; P_b between computations) driven by 'perseus serve' and per-rank "
      "frequency controllers over loopback HTTP, and compare measured with predicted energy. "
      "Time is emulated, so the numbers are exact and the same under any load. Example: "
      "--profile data/perseus-sosp24-emulation/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  cmd->add_option("--profile", a->profile,
                  "Stage profile CSV (stage,instruction,frequency,time,energy)")
      ->required();
  cmd->add_option("--microbatches", a->microbatches, "Microbatches per iteration")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--unit-time", a->unit_time, "Planner time quantum τ in seconds")
      ->capture_default_str();
  cmd->add_option("--p-blocking", a->p_blocking,
                  "GPU power while blocked on communication, in watts (83.64: A100 SXM)")
      ->capture_default_str();
  cmd->add_option("--cost-model", a->cost_model, "Planner energy model")
      ->check(CLI::IsMember({"exponential", "convex"}))
      ->capture_default_str();
  cmd->add_option("--iterations", a->iterations, "Measured iterations per scenario")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--straggler", a->straggler,
                  "A straggler holds every pipeline to this multiple of T_min (0: no straggler "
                  "scenarios)")
      ->capture_default_str();
  cmd->add_option("--straggler-tolerance", a->tolerance,
                  "StragglerAware's detection threshold (fraction above the aimed time)")
      ->check(CLI::Range(1e-6, 10.0))
      ->capture_default_str();
  cmd->add_option("--out", a->out,
                  "Keep everything in DIR: report.json, solution/ (frontier.csv, plans.json), "
                  "dumps/<scenario>/<job id>/ (the server's dumps)");
  cmd->add_flag("--plot", a->plot, "Draw DIR/emulation.png and .svg (frontier + measured points)");
  cmd->add_flag("--json", a->json, "Print report.json instead of the table");
  cmd->footer(
      "Exit status 1 when a check fails (e.g. the measured saving is more than 2 points from the "
      "predicted one). See docs/perseus.md.");
  cmd->callback([a] { emulate(*a); });

  auto s = std::make_shared<StageArgs>();
  auto* stage = perseus->add_subcommand("emulate-stage", "One stage process of 'perseus emulate'");
  stage->group("");  // internal: started by 'perseus emulate'
  stage->add_option("--control-fd", s->control)->required();
  stage->add_option("--previous-fd", s->previous)->required();
  stage->add_option("--next-fd", s->next)->required();
  stage->callback([s] {
    zeus::cli::set_exit_code(pf::run_stage_worker({s->control, s->previous, s->next}));
  });
}

const bool registered = zeus::cli::register_command(52, &setup);

}  // namespace
}  // namespace zeus::cli::perseus_emulate_command
