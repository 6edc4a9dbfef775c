// The Prometheus exposition: names, labels and values from the fake NVML and
// a fake powercap tree; failed reads left out and counted; a scrape that
// reuses its buffer does not reallocate. Then the /metrics listener of a
// daemon.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "zeus/device/sim_gpu.h"
#include "zeus/zeusd/metrics.h"
#include "zeusd_test_helpers.h"

namespace zeus::zeusd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Metrics, RendersEveryFamilyWithLabels) {
  FakeNode node;
  node.nvml.set_energy_mj(0, 2500);
  node.nvml.set_power_mw(0, 150000, 140000, 20000);
  node.nvml.set_temperature(1, 61);
  node.nvml.set_architecture(1, zeus::testing::nvml_arch::kPascal);
  std::vector<std::shared_ptr<device::Gpu>> gpus(node.devices.gpus.begin(),
                                                 node.devices.gpus.end());
  MetricsRenderer m(gpus, node.devices.cpus);
  std::string out;
  m.render(out);
  const std::string l0 =
      R"(gpu="0",uuid="GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000000",model_name="NVIDIA H100 80GB HBM3")";
  EXPECT_THAT(out, HasSubstr("# TYPE zeus_gpu_energy_joules_total counter\n"));
  EXPECT_THAT(out, HasSubstr("zeus_gpu_energy_joules_total{" + l0 + "} 2.5\n"));
  EXPECT_THAT(out, Not(HasSubstr("zeus_gpu_energy_joules_total{gpu=\"1\"")));  // Pascal: no counter
  EXPECT_THAT(out, HasSubstr("zeus_gpu_power_watts{" + l0 + "} 150\n"));
  EXPECT_THAT(out, HasSubstr("zeus_gpu_power_average_watts{" + l0 + "} 140\n"));
  EXPECT_THAT(out, HasSubstr("zeus_gpu_power_limit_watts{" + l0 + "} 700\n"));
  EXPECT_THAT(out, HasSubstr("# TYPE zeus_gpu_temperature_celsius gauge\n"));
  EXPECT_THAT(out, HasSubstr("zeus_gpu_temperature_celsius{gpu=\"1\","));
  EXPECT_THAT(out, HasSubstr("} 61\n"));
  EXPECT_THAT(out,
              HasSubstr(R"(zeus_cpu_package_energy_joules_total{package="0",zone="package-0"} 1)"
                        "\n"));
  EXPECT_THAT(out,
              HasSubstr(R"(zeus_cpu_package_energy_joules_total{package="1",zone="package-1"} 2)"
                        "\n"));
  EXPECT_THAT(out,
              HasSubstr(R"(zeus_cpu_dram_energy_joules_total{package="0",zone="package-0"} 0.5)"
                        "\n"));
  EXPECT_THAT(out, Not(HasSubstr("zeus_cpu_dram_energy_joules_total{package=\"1\"")));
  // A failing read is left out and counted, never a made-up value.
  node.nvml.fail_always("nvmlDeviceGetPowerManagementLimit", zeus::testing::nvml_rc::kUnknown);
  out.clear();
  m.render(out);
  EXPECT_THAT(out, Not(HasSubstr("zeus_gpu_power_limit_watts{gpu")));
  EXPECT_THAT(out, HasSubstr("zeus_metrics_read_errors_total{device=\"gpu\"} 2\n"));
  node.nvml.fail_always("nvmlDeviceGetPowerManagementLimit", 0);
}

TEST(Metrics, ReusedBufferIsNotReallocated) {
  FakeNode node(8);
  std::vector<std::shared_ptr<device::Gpu>> gpus(node.devices.gpus.begin(),
                                                 node.devices.gpus.end());
  MetricsRenderer m(gpus, node.devices.cpus);
  std::string out;
  m.render(out);
  const std::size_t size = out.size();
  out.clear();
  out.reserve(size + 256);
  const char* data = out.data();
  for (int i = 0; i < 10; ++i) {
    out.clear();
    m.render(out);
  }
  EXPECT_EQ(out.data(), data);
}

// The DCGM exporter's names, units and labels, so its dashboards work.
TEST(Metrics, DcgmExporterFamiliesWithItsUnitsAndLabels) {
  FakeNode node;
  constexpr unsigned long long kMiB = 1048576ULL;
  node.nvml.set_telemetry(
      0, 88, 35, 1755, 2619,
      device::clock_event::kSwPowerCap | device::clock_event::kHwThermalSlowdown, 30000 * kMiB,
      81559 * kMiB);
  node.nvml.set_temperature(0, 66);
  node.nvml.set_energy_mj(0, 123456789);
  node.nvml.set_power_mw(0, 150000, 140250, 20000);
  node.nvml.set_minor_number(1, 5);
  std::vector<std::shared_ptr<device::Gpu>> gpus(node.devices.gpus.begin(),
                                                 node.devices.gpus.end());
  MetricsRenderer m(gpus, node.devices.cpus, "node\"7");
  std::string out;
  m.render(out);
  const std::string l0 =
      R"({gpu="0",UUID="GPU-1a2b3c4d-5e6f-4a1b-8c2d-000000000000",pci_bus_id="00000000:18:00.0",)"
      R"(device="nvidia0",modelName="NVIDIA H100 80GB HBM3",hostname="node\"7"})";
  EXPECT_THAT(out, HasSubstr("# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n"));
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_SM_CLOCK" + l0 + " 1755\n"));
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_MEM_CLOCK" + l0 + " 2619\n"));
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_GPU_TEMP" + l0 + " 66\n"));
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_POWER_USAGE" + l0 + " 140.25\n"));  // W, the average
  EXPECT_THAT(out, HasSubstr("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"));
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + l0 + " 123456789\n"));  // mJ
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_GPU_UTIL" + l0 + " 88\n"));
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_MEM_COPY_UTIL" + l0 + " 35\n"));
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_FB_USED" + l0 + " 30000\n"));  // MiB
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_FB_FREE" + l0 + " 51559\n"));
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_CLOCKS_EVENT_REASONS" + l0 + " 68\n"));  // 0x44
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS" + l0 + " 68\n"));
  // The device label is the minor number, not the index.
  EXPECT_THAT(out, HasSubstr(R"(pci_bus_id="00000000:38:00.0",device="nvidia5",)"));
  // The existing families are unchanged.
  EXPECT_THAT(out, HasSubstr("zeus_gpu_power_watts{gpu=\"0\",uuid=\""));

  // NOT_SUPPORTED: the family keeps its header, the GPU's line is left out,
  // and it is not a read error (nothing failed; there is no such value).
  node.nvml.fail_always("nvmlDeviceGetUtilizationRates", zeus::testing::nvml_rc::kNotSupported);
  out.clear();
  m.render(out);
  node.nvml.fail_always("nvmlDeviceGetUtilizationRates", 0);
  EXPECT_THAT(out, HasSubstr("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"));
  EXPECT_THAT(out, Not(HasSubstr("DCGM_FI_DEV_GPU_UTIL{")));
  EXPECT_THAT(out, HasSubstr("DCGM_FI_DEV_SM_CLOCK" + l0 + " 1755\n"));
  EXPECT_THAT(out, HasSubstr("zeus_metrics_read_errors_total{device=\"gpu\"} 0\n"));
  // A GPU that fails outright loses its telemetry lines for that scrape, counted.
  node.nvml.fail_always("nvmlDeviceGetMemoryInfo", zeus::testing::nvml_rc::kUnknown);
  out.clear();
  m.render(out);
  node.nvml.fail_always("nvmlDeviceGetMemoryInfo", 0);
  EXPECT_THAT(out, Not(HasSubstr("DCGM_FI_DEV_FB_USED{")));
  EXPECT_THAT(out, Not(HasSubstr("DCGM_FI_DEV_SM_CLOCK{")));
  EXPECT_THAT(out, HasSubstr("zeus_metrics_read_errors_total{device=\"gpu\"} 2\n"));
}

TEST(Metrics, DcgmLabelsLeaveOutWhatTheBackendCannotSay) {
  ManualClock clock;
  std::vector<std::shared_ptr<device::Gpu>> gpus = {
      std::make_shared<device::SimGpu>(device::SimGpuModel{}, clock)};
  MetricsRenderer m(gpus, {}, "");
  std::string out;
  m.render(out);
  // No PCI address, minor number or host name: no made-up label values.
  EXPECT_THAT(out, HasSubstr(R"(DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-51a00000-0000-4000-8000-)"
                             R"(000000000000",modelName="Zeus Simulated GPU"} 100)"
                             "\n"));
}

// dcgm-exporter renamed Hostname to hostname; dashboards made before that
// get the old name back by asking for it, and the families carry only one.
TEST(Metrics, DcgmHostLabelNameIsConfigurable) {
  ManualClock clock;
  std::vector<std::shared_ptr<device::Gpu>> gpus = {
      std::make_shared<device::SimGpu>(device::SimGpuModel{}, clock)};
  std::string current, old;
  MetricsRenderer(gpus, {}, "n1").render(current);
  MetricsRenderer(gpus, {}, "n1", "Hostname").render(old);
  EXPECT_THAT(current, HasSubstr(R"(modelName="Zeus Simulated GPU",hostname="n1"} 100)"));
  EXPECT_THAT(current, Not(HasSubstr("Hostname")));
  EXPECT_THAT(old, HasSubstr(R"(modelName="Zeus Simulated GPU",Hostname="n1"} 100)"));
  EXPECT_THAT(old, Not(HasSubstr("hostname=")));
  // Zeus's own families never carry the host label (Prometheus adds instance).
  EXPECT_THAT(current, HasSubstr(R"(zeus_gpu_power_limit_watts{gpu="0",uuid=)"));
  EXPECT_THAT(current, Not(HasSubstr(R"(model_name="Zeus Simulated GPU",hostname)")));
  for (const char* bad : {"", "9host", "host-name", "__name", "host name"}) {
    EXPECT_THROW(MetricsRenderer(gpus, {}, "n1", bad), Error) << "'" << bad << "'";
  }
  EXPECT_NO_THROW(MetricsRenderer(gpus, {}, "n1", "node_name2"));
}

TEST(Metrics, LabelValuesAreEscaped) {
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(Metrics, DaemonServesThemOnItsOwnListener) {
  FakeNode node;
  DaemonOptions o;
  o.metrics_address = "127.0.0.1:0";
  o.num_workers = 1;
  RunningDaemon d(o, node.devices);
  http::Client m(d.daemon->metrics_url());
  auto r = m.get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_THAT(std::string(r.headers.get("Content-Type").value_or("")),
              HasSubstr("text/plain; version=0.0.4"));
  EXPECT_THAT(r.body, HasSubstr("zeus_gpu_power_watts{gpu=\"1\""));
  EXPECT_THAT(r.body, HasSubstr("zeusd_leases 0\n"));
  EXPECT_THAT(r.body, HasSubstr(R"(DCGM_FI_DEV_SM_CLOCK{gpu="1",UUID="GPU-1a2b3c4d-5e6f-4a1b-8c2d-)"
                                R"(000000000001",pci_bus_id="00000000:38:00.0",device="nvidia1",)"
                                R"(modelName="NVIDIA H100 80GB HBM3",hostname=")" +
                                escape_label_value(host_name()) +
                                R"("} 1980)"
                                "\n"));
  // The metrics listener serves nothing else; the API socket has no /metrics.
  EXPECT_EQ(m.get("/discover").status, 404);
  auto c = d.client();
  EXPECT_EQ(c.get("/metrics").status, 404);
}

// The daemon option reaches the scrape; a name Prometheus rejects stops the
// daemon before it serves anything.
TEST(Metrics, DaemonUsesTheConfiguredHostLabel) {
  FakeNode node;
  DaemonOptions o;
  o.metrics_address = "127.0.0.1:0";
  o.num_workers = 1;
  o.dcgm_hostname_label = "Hostname";
  {
    RunningDaemon d(o, node.devices);
    const auto body = http::Client(d.daemon->metrics_url()).get("/metrics").body;
    EXPECT_THAT(body, HasSubstr(R"(modelName="NVIDIA H100 80GB HBM3",Hostname=")" +
                                escape_label_value(host_name()) + R"("} 1980)"));
    EXPECT_THAT(body, Not(HasSubstr("hostname=")));
  }
  o.dcgm_hostname_label = "host-name";
  EXPECT_THROW(Daemon(o, node.devices), Error);
}

}  // namespace
}  // namespace zeus::zeusd::testing
