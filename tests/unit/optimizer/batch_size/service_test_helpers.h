// Shared pieces of the batch-size optimizer service tests: temporary
// directories, a served Service on loopback, a throwaway PostgreSQL cluster.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "http/server.h"
#include "support/temp_dir.h"
#include "workloads/batch_size_w1.h"
#include "zeus/http/client.h"
#include "zeus/optimizer/batch_size/server/service.h"
#include "zeus/optimizer/batch_size/server/store.h"

namespace zeus::batch_size::testing {

// A fresh directory under the system temp dir, removed on destruction.
using ::zeus::testing::TempDir;

// A store, the service on it and an HTTP server on 127.0.0.1:<any port>.
class ServedBso {
 public:
  explicit ServedBso(const std::string& database_url, ServiceLimits limits = {});
  ~ServedBso();
  std::string url() const;
  http::Client client() const { return http::Client(url()); }
  // Stops the server and closes the store (as SIGTERM does).
  void stop();

 private:
  std::unique_ptr<Store> store_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<http::Server> server_;
  int port_ = 0;
};

// The load test's job spec (j-th job).
using w1::workload_spec;

// Sends JSON and parses the answer; the status goes to *status.
nlohmann::json call(http::Client& c, http::Method method, const std::string& target,
                    const nlohmann::json& body, int* status, const http::Headers& headers = {});

// A PostgreSQL server of its own: initdb into a temp dir, listening only on a
// Unix socket there, run as an unprivileged user when the tests run as root,
// stopped and removed on destruction.
class PostgresCluster {
 public:
  // nullopt when Debian's PostgreSQL server binaries are not installed.
  static std::unique_ptr<PostgresCluster> start();
  ~PostgresCluster();
  // A libpq URI for a fresh database `name` (created on first use).
  std::string url(const std::string& name);
  // Runs one SQL statement with psql on database `name`; its rows, '|'-separated.
  std::string query(const std::string& name, const std::string& sql);

 private:
  PostgresCluster() = default;
  std::string bin_dir_;
  std::string dir_;
  std::string run_as_;  // "" when not root
};

}  // namespace zeus::batch_size::testing
