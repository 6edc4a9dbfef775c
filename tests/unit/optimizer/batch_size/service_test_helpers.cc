#include "unit/optimizer/batch_size/service_test_helpers.h"

#include <fmt/format.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "zeus/optimizer/batch_size/server/http_api.h"

namespace zeus::batch_size::testing {

namespace fs = std::filesystem;

ServedBso::ServedBso(const std::string& database_url, ServiceLimits limits) {
  store_ = open_store(database_url);
  service_ = std::make_unique<Service>(*store_, limits);
  http::Router router;
  add_routes(router, *service_);
  server_ = std::make_unique<http::Server>(std::move(router));
  port_ = server_->listen_tcp("127.0.0.1", 0);
  server_->start();
}

ServedBso::~ServedBso() { stop(); }

void ServedBso::stop() {
  if (server_) server_->shutdown();
  if (store_) store_->close();
}

std::string ServedBso::url() const { return fmt::format("http://127.0.0.1:{}", port_); }

nlohmann::json call(http::Client& c, http::Method method, const std::string& target,
                    const nlohmann::json& body, int* status, const http::Headers& headers) {
  const auto r = c.request(method, target, body.is_null() ? std::string() : body.dump(), headers);
  if (status != nullptr) *status = r.status;
  return r.body.empty() ? nlohmann::json() : nlohmann::json::parse(r.body);
}

namespace {

// Runs argv (as `user` through runuser when set); throws on failure.
void run(const std::vector<std::string>& argv, const std::string& user) {
  std::vector<std::string> full;
  if (!user.empty()) full = {"runuser", "-u", user, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  std::string cmd;
  for (const auto& a : full) cmd += "'" + a + "' ";
  cmd += ">/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
}

std::string find_bin_dir() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    if (fs::exists(e.path() / "bin" / "initdb")) return (e.path() / "bin").string();
  }
  return "";
}

}  // namespace

std::unique_ptr<PostgresCluster> PostgresCluster::start() {
  const std::string bin = find_bin_dir();
  if (bin.empty()) return nullptr;
  std::unique_ptr<PostgresCluster> c(new PostgresCluster());
  c->bin_dir_ = bin;
  std::string t = (fs::temp_directory_path() / "zeus_pg_XXXXXX").string();
  if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  c->dir_ = t;
  if (geteuid() == 0) {
    // PostgreSQL refuses to run as root.
    c->run_as_ = getpwnam("postgres") != nullptr ? "postgres" : "nobody";
    const passwd* pw = getpwnam(c->run_as_.c_str());
    if (pw == nullptr || chown(t.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      throw std::runtime_error("cannot hand " + t + " to " + c->run_as_);
    }
  }
  run({bin + "/initdb", "-D", t + "/data", "-A", "trust", "-U", "zeus", "--no-sync", "-E", "UTF8"},
      c->run_as_);
  run({bin + "/pg_ctl", "-D", t + "/data", "-l", t + "/log", "-w", "-o",
       "-k " + t + " -c listen_addresses='' -c fsync=off -c max_connections=100", "start"},
      c->run_as_);
  return c;
}

PostgresCluster::~PostgresCluster() {
  try {
    run({bin_dir_ + "/pg_ctl", "-D", dir_ + "/data", "-m", "immediate", "-w", "stop"}, run_as_);
  } catch (...) {
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PostgresCluster::url(const std::string& name) {
  try {
    run({bin_dir_ + "/createdb", "-h", dir_, "-U", "zeus", name}, run_as_);
  } catch (...) {
    // Already exists.
  }
  return fmt::format("postgresql:///{}?host={}&user=zeus", name, dir_);
}

std::string PostgresCluster::query(const std::string& name, const std::string& sql) {
  std::string cmd = run_as_.empty() ? "" : "runuser -u " + run_as_ + " -- ";
  cmd += "'" + bin_dir_ + "/psql' -h '" + dir_ + "' -U zeus -d '" + name + "' -At -c \"" + sql +
         "\" 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed");
  std::string out;
  char buf[4096];
  while (const std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace zeus::batch_size::testing
