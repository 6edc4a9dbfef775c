// `zeus top`: who is using each GPU and CPU package now. A thin adapter: the
// ledger comes from the node's zeusd (GET /attribution) when one is
// configured, else from a NodeAttributor over this machine's devices; the
// table is attribution::render_top, the same for both.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "command_registry.h"
#include "monitor/attribution/top_table.h"
#include "zeus/device/devices.h"
#include "zeus/device/zeusd_backend.h"
#include "zeus/monitor/attribution/node_attributor.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"
#include "zeus/util/signals.h"

namespace zeus::cli::top_command {
namespace {

struct TopFlags {
  double interval = 1.0;
  bool once = false;
  bool json = false;
  bool local = false;
  std::size_t rows = 10;
  std::string gpu_idle_power;
  std::string cpu_idle_power;
};

// Where the ledger's JSON comes from.
class LedgerSource {
 public:
  virtual ~LedgerSource() = default;
  virtual std::string json() = 0;
  virtual void tick() {}
};

class DaemonSource final : public LedgerSource {
 public:
  explicit DaemonSource(device::ZeusdConfig config) : connection_(std::move(config)) {}
  std::string json() override { return connection_.get("/attribution?processes=true"); }

 private:
  device::ZeusdConnection connection_;
};

class LocalSource final : public LedgerSource {
 public:
  explicit LocalSource(const TopFlags& f) {
    device::DiscoveryOptions discovery;
    discovery.use_zeusd = false;
    devices_ = device::discover_devices(discovery);
    for (const auto& note : devices_.notes) fmt::print(stderr, "zeus: note: {}\n", note);
    attribution::AttributorOptions options;
    options.gpu_idle = attribution::parse_idle_powers(f.gpu_idle_power, "--gpu-idle-power");
    options.cpu_idle = attribution::parse_idle_powers(f.cpu_idle_power, "--cpu-idle-power");
    attributor_ =
        std::make_unique<attribution::NodeAttributor>(devices_.gpus, devices_.cpus, options);
    bool any = false;
    attributor_->visit(
        [&](const attribution::Ledger& ledger, auto) { any = ledger.device_count() > 0; });
    if (!any) {
      // An empty table would look like a machine where nobody used anything.
      throw_error(ErrorCode::kNotFound,
                  "nothing to attribute: no GPU with an energy counter and no readable RAPL "
                  "package on this machine (see `zeus show-env`; RAPL needs root)");
    }
    attributor_->poll();  // the counters' starting points
  }
  std::string json() override { return attributor_->json(true); }
  void tick() override { attributor_->poll(); }

 private:
  device::DeviceInventory devices_;
  std::unique_ptr<attribution::NodeAttributor> attributor_;
};

std::unique_ptr<LedgerSource> open_source(const TopFlags& f) {
  if (!f.local) {
    if (auto config = device::ZeusdConfig::from_env())
      return std::make_unique<DaemonSource>(*config);
  }
  return std::make_unique<LocalSource>(f);
}

void run(const TopFlags& f) {
  if (!(f.interval >= 0.1 && f.interval <= 3600)) {
    throw_error(ErrorCode::kInvalidArgument, "--interval must be seconds in [0.1, 3600]");
  }
  auto source = open_source(f);
  const bool live = !f.once && !f.json && ::isatty(STDOUT_FILENO) == 1;
  std::atomic<bool> stop{false};
  SignalSubscription signals(SignalSubscription::Kind::kHandle, [&](int) { stop = true; });
  attribution::TopOptions top;
  top.rows_per_device = f.rows;
  SteadyClock& clock = SteadyClock::instance();
  Seconds next = clock.now();
  while (!stop) {
    next += Seconds(f.interval);
    while (!stop && clock.now() < next) {
      clock.sleep_for(std::min(Seconds(0.05), next - clock.now()));
    }
    if (stop) break;
    source->tick();
    const std::string body = source->json();
    if (f.json) {
      fmt::print("{}\n", body);
    } else {
      // A terminal gets the table redrawn in place; a pipe gets one table
      // per interval, separated by a blank line.
      fmt::print("{}{}\n", live ? "\x1b[H\x1b[2J" : "", attribution::render_top(body, top));
    }
    std::fflush(stdout);
    if (f.once) break;
  }
}

void setup(CLI::App& root) {
  auto f = std::make_shared<TopFlags>();
  auto* cmd = root.add_subcommand(
      "top",
      "Who is using each GPU and CPU package now: power and energy per process and "
      "workload, idle, the split method (from zeusd when ZEUSD_SOCK_PATH is set)");
  cmd->add_option("--interval", f->interval, "Seconds between refreshes")->capture_default_str();
  cmd->add_flag("--once", f->once, "Print one table (after one interval) and exit");
  cmd->add_flag("--json", f->json,
                "The ledger as JSON (one document per interval; with --once, one)");
  cmd->add_flag("--local", f->local, "Read this machine's devices even when a zeusd is configured");
  cmd->add_option("--rows", f->rows, "Consumers shown per device")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000}))
      ->capture_default_str();
  cmd->add_option("--gpu-idle-power", f->gpu_idle_power,
                  "Idle power per GPU index for a local ledger, e.g. 0=60 (else learned)");
  cmd->add_option("--cpu-idle-power", f->cpu_idle_power,
                  "Idle power per CPU package for a local ledger, e.g. 0=25 (else 0)");
  cmd->footer(
      "Examples:\n  zeus top\n  zeus top --once --json | jq '.workloads'\n"
      "Without zeusd, run as root for other users' processes and RAPL (docs/attribution.md).");
  cmd->callback([f] { run(*f); });
}

const bool registered = zeus::cli::register_command(22, &setup);

}  // namespace
}  // namespace zeus::cli::top_command
