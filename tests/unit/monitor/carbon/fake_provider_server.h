// A fake ElectricityMaps + OpenEI server on loopback, built on the project's
// HTTP layer. It serves the fixture files under fixtures/, checks the query
// parameters the clients must send, records every request, and can be told to
// answer an error status, an empty history, garbage, or slowly.
//
// Thread-safety: handlers run on the server's thread; a mutex guards the
// script and the request log.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"
#include "zeus/util/files.h"

namespace zeus::testing {

inline std::string carbon_fixture(const std::string& name) {
  return read_file(std::string(ZEUS_SOURCE_DIR) + "/tests/unit/monitor/carbon/fixtures/" + name);
}

class FakeProviderServer {
 public:
  struct Script {
    int status = 200;
    std::string body;  // empty: the route's fixture
    std::chrono::milliseconds delay{0};
  };
  struct Seen {
    std::string path;
    std::map<std::string, std::string> query;
    std::string auth_token;  // the auth-token header
  };

  FakeProviderServer() {
    http::Router router;
    const auto add = [&](const std::string& path, std::string fixture) {
      router.route(http::Method::kGet, path, [this, path, fixture](const http::Request& r) {
        return answer(path, fixture, r);
      });
    };
    add("/v3/carbon-intensity/latest", "electricitymaps_latest.json");
    add("/v3/carbon-intensity/history", "electricitymaps_history.json");
    add("/utility_rates", "openei_utility_rates.json");
    server_ = std::make_unique<http::Server>(std::move(router));
    port_ = server_->listen_tcp("127.0.0.1", 0);
    server_->start();
  }
  ~FakeProviderServer() { server_->shutdown(); }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void script(const std::string& path, Script s) {
    std::lock_guard lock(mutex_);
    scripts_[path] = std::move(s);
  }
  std::vector<Seen> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  std::size_t count(const std::string& path) const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& s : seen_) n += s.path == path ? 1 : 0;
    return n;
  }

 private:
  http::Response answer(const std::string& path, const std::string& fixture,
                        const http::Request& r) {
    Script s;
    {
      std::lock_guard lock(mutex_);
      Seen seen{path, {}, std::string(r.headers.get("auth-token").value_or(""))};
      for (const auto& [k, v] : r.query) seen.query[k] = v;
      seen_.push_back(std::move(seen));
      if (auto it = scripts_.find(path); it != scripts_.end()) s = it->second;
    }
    if (s.delay.count() > 0) std::this_thread::sleep_for(s.delay);
    http::Response resp;
    resp.status = s.status;
    resp.body = s.body.empty() ? carbon_fixture(fixture) : s.body;
    resp.headers.set("Content-Type", "application/json");
    return resp;
  }

  std::unique_ptr<http::Server> server_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::map<std::string, Script> scripts_;
  std::vector<Seen> seen_;
};

}  // namespace zeus::testing
