// ZeusdConnection: discovery, whoami, and commands under a lease, over the
// device part's own HTTP/1.1 client (zeusd_wire.h), so every build of the
// library, the minimal one and pip's included, reaches zeusd.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "device/zeusd/zeusd_wire.h"
#include "util/text.h"
#include "zeus/device/zeusd_backend.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::device {
namespace {

using device_internal::WireClient;
using device_internal::WireResponse;

std::string error_text(const WireResponse& r) {
  try {
    const auto j = nlohmann::json::parse(r.body);
    if (j.contains("error") && j["error"].is_string()) return j["error"];
    if (j.contains("errors") && j["errors"].is_object()) {
      std::string out;
      for (const auto& [id, msg] : j["errors"].items()) {
        out += (out.empty() ? "" : "; ") +
               fmt::format("GPU {}: {}", id, msg.is_string() ? msg.get<std::string>() : msg.dump());
      }
      return out;
    }
  } catch (const std::exception&) {
  }
  return printable(r.body, 200);
}

}  // namespace

class ZeusdConnection::Impl {
 public:
  explicit Impl(ZeusdConfig c) : config(std::move(c)), client(config.url, options()) {}
  static device_internal::WireOptions options() {
    device_internal::WireOptions o;
    o.connect_timeout = Seconds(5.0);
    o.request_timeout = Seconds(60.0);  // a blocking command may run an override command
    return o;
  }
  WireResponse send(const char* method, const std::string& target) {
    device_internal::WireHeaders h;
    if (!config.token.empty()) h.emplace_back("Authorization", "Bearer " + config.token);
    try {
      return client.request(method, target, h);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kInvalidArgument) throw;  // e.g. a line break in ZEUSD_TOKEN
      if (e.code() == ErrorCode::kNoPermission) {
        // zeusd is there; its socket lets in its group only (the unit's 660).
        throw_error(ErrorCode::kNoPermission,
                    fmt::format("cannot reach zeusd at {}: {}. The socket admits members of its "
                                "group (zeusd in the packaged unit): ask an administrator to add "
                                "you (sudo adduser $USER zeusd), then log in again (docs/zeusd.md)",
                                config.endpoint, e.what()));
      }
      throw_error(ErrorCode::kIo,
                  fmt::format("cannot reach zeusd at {}: {}. Start it (docs/zeusd.md) or unset "
                              "ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT",
                              config.endpoint, e.what()));
    }
  }
  [[noreturn]] void fail(const WireResponse& r, const std::string& what) const {
    const std::string msg =
        fmt::format("zeusd at {} refused {}: {}", config.endpoint, what, error_text(r));
    switch (r.status) {
      case 400:
        throw_error(ErrorCode::kInvalidArgument, msg);
      case 401:
        throw_error(ErrorCode::kNoPermission,
                    msg + " (set ZEUSD_TOKEN to a token from `zeusd token issue`)");
      case 403:
        throw_error(ErrorCode::kNoPermission, msg);
      case 404:
        throw_error(ErrorCode::kNotSupported,
                    msg + " (the daemon does not serve this API group: see its --enable)");
      case 409:
        throw_error(ErrorCode::kAlreadyExists, msg);
      default:
        throw_error(ErrorCode::kUnknown, msg);
    }
  }
  void ensure_lease_locked(const ZeusdStatus& s) {
    if (!lease.empty() || config.persistent_settings ||
        std::find(s.extensions.begin(), s.extensions.end(), "leases") == s.extensions.end()) {
      return;
    }
    const auto r = send("POST", "/lease/acquire");
    if (r.status != 200) fail(r, "a lease");
    lease = nlohmann::json::parse(r.body).at("lease_id").get<std::string>();
    log::debug("zeusd: holding lease {} on {}", lease, config.endpoint);
  }

  ZeusdConfig config;
  std::mutex mutex;  // guards client and lease
  WireClient client;
  std::string lease;
};

ZeusdConnection::ZeusdConnection(ZeusdConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {
  std::lock_guard lock(impl_->mutex);
  status_.endpoint = impl_->config.endpoint;
  const auto r = impl_->send("GET", "/discover");
  if (r.status != 200) impl_->fail(r, "discovery");
  try {
    const auto j = nlohmann::json::parse(r.body);
    for (const auto& g : j.at("gpus")) {
      status_.gpus.push_back({g.at("id").get<int>(), g.at("name").get<std::string>(),
                              g.value("pci_address", ""),
                              g.at("cumulative_energy_available").get<bool>()});
    }
    for (const auto& c : j.at("cpus")) {
      status_.cpus.push_back({c.at("id").get<int>(), c.at("dram_available").get<bool>()});
    }
    status_.enabled_api_groups = j.at("enabled_api_groups").get<std::vector<std::string>>();
    status_.auth_required = j.at("auth_required").get<bool>();
    if (j.contains("extensions"))
      status_.extensions = j["extensions"].get<std::vector<std::string>>();
  } catch (const std::exception& e) {
    throw_error(ErrorCode::kParse, fmt::format("zeusd at {} answered /discover with something "
                                               "unexpected ({}); is it a zeusd?",
                                               impl_->config.endpoint, e.what()));
  }
  if (status_.auth_required) {
    if (impl_->config.token.empty()) {
      status_.auth_error = "the daemon requires a token and ZEUSD_TOKEN is not set";
    } else {
      const auto w = impl_->send("GET", "/auth/whoami");
      if (w.status == 200) {
        const auto j = nlohmann::json::parse(w.body);
        status_.user = j.value("sub", "");
        status_.scopes = j.value("scopes", std::vector<std::string>{});
        if (j.contains("exp") && j["exp"].is_number())
          status_.token_expires = j["exp"].get<std::int64_t>();
      } else {
        status_.auth_error = fmt::format("token rejected (HTTP {}): {}", w.status, error_text(w));
      }
    }
  }
}

ZeusdConnection::~ZeusdConnection() = default;

void ZeusdConnection::gpu_command(const std::string& op, int gpu, const std::string& query) {
  std::lock_guard lock(impl_->mutex);
  for (int attempt = 0;; ++attempt) {
    impl_->ensure_lease_locked(status_);
    std::string target = fmt::format("/gpu/{}?gpu_ids={}&block=true", op, gpu);
    if (!query.empty()) target += "&" + query;
    if (!impl_->lease.empty()) target += "&lease_id=" + impl_->lease;
    const auto r = impl_->send("POST", target);
    if (r.status == 200) return;
    if (r.status == 410 && attempt == 0) {
      // The connection (and with it our lease) was lost and zeusd restored
      // what we had set; take a new lease and apply this command under it.
      log::warn("zeusd: lease {} ended ({}); taking a new one", impl_->lease, error_text(r));
      impl_->lease.clear();
      continue;
    }
    impl_->fail(r, fmt::format("{} on GPU {}", op, gpu));
  }
}

std::string ZeusdConnection::get(const std::string& target) {
  std::lock_guard lock(impl_->mutex);
  const auto r = impl_->send("GET", target);
  if (r.status != 200) impl_->fail(r, target);
  return r.body;
}

std::string ZeusdConnection::lease_id() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->lease;
}

}  // namespace zeus::device
