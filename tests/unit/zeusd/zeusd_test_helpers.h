// Shared pieces of the zeusd tests: a node made of the fake NVML and a fake
// powercap tree, a daemon on a Unix socket in a fresh temp dir, and clients.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fakes/nvml/fake_nvml_control.h"
#include "fakes/powercap/fake_powercap.h"
#include "zeus/device/nvml.h"
#include "zeus/device/rapl.h"
#include "zeus/http/client.h"
#include "zeus/zeusd/daemon.h"

namespace zeus::zeusd::testing {

using zeus::testing::FakeNvml;
using zeus::testing::FakePowercap;

inline std::string make_temp_dir(const char* tag = "zeusd") {
  std::string t = (std::filesystem::temp_directory_path() /
                   (std::string(tag) + "_" + std::to_string(::getpid()) + "_XXXXXX"))
                      .string();
  if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp");
  return t;
}

// Writes a signing key as an operator must: owner-only (0600). Returns its path.
inline std::string write_signing_key(const std::string& dir, const std::string& key) {
  const std::string path = dir + "/key";
  { std::ofstream(path) << key; }
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return path;
}

// Two fake H100s (NVML) and two RAPL packages, package 0 with DRAM.
class FakeNode {
 public:
  explicit FakeNode(unsigned gpus = 2) {
    nvml.reset();
    nvml.set_device_count(gpus);
    device::NvmlOptions o;
    o.library_path = nvml.path();
    o.cuda_visible_devices = std::nullopt;
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    auto set = device::open_nvml_gpus(o);
    for (auto& g : set.gpus) devices.gpus.push_back(std::move(g));
    powercap.add_zone("intel-rapl:0", "package-0", 1'000'000);
    powercap.add_zone("intel-rapl:0:0", "dram", 500'000, zeus::testing::kIntelDramRangeUj);
    powercap.add_zone("intel-rapl:1", "package-1", 2'000'000);
    device::RaplOptions r;
    r.root = powercap.root();
    auto cpus = device::open_rapl_cpus(r);
    for (auto& c : cpus.cpus) devices.cpus.push_back(std::move(c));
  }

  FakeNvml nvml;
  FakePowercap powercap;
  DaemonDevices devices;
};

// A daemon on a Unix socket in a temp dir, started.
struct RunningDaemon {
  RunningDaemon(DaemonOptions options, DaemonDevices devices) : dir(make_temp_dir()) {
    if (options.mode == TransportMode::kUds) options.socket_path = dir + "/zeusd.sock";
    daemon = std::make_unique<Daemon>(std::move(options), std::move(devices));
    daemon->start();
  }
  ~RunningDaemon() {
    daemon.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  http::Client client(http::ClientOptions o = {}) const {
    return http::Client(daemon->api_url(), o);
  }

  std::string dir;
  std::unique_ptr<Daemon> daemon;
};

inline nlohmann::json json_of(const http::Response& r) {
  return r.body.empty() ? nlohmann::json() : nlohmann::json::parse(r.body);
}

inline http::Response post(http::Client& c, const std::string& target,
                           const std::string& token = "") {
  http::Headers h;
  if (!token.empty()) h.set("Authorization", "Bearer " + token);
  return c.request(http::Method::kPost, target, {}, h);
}
inline http::Response get(http::Client& c, const std::string& target,
                          const std::string& token = "") {
  http::Headers h;
  if (!token.empty()) h.set("Authorization", "Bearer " + token);
  return c.request(http::Method::kGet, target, {}, h);
}

}  // namespace zeus::zeusd::testing
