// GET /discover, GET /time, GET /auth/whoami.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeus/util/error.h"
#include "zeusd/daemon_state.h"
#include "zeusd/query.h"

namespace zeus::zeusd {

void add_server_routes(Daemon::State& s, http::Router& router) {
  add_route(s, router, http::Method::kGet, "/discover", RouteAccess::anyone(),
            [&s](http::Request request, http::Responder responder, const Caller&) {
              QueryFields(request.query, {});
              nlohmann::json gpus = nlohmann::json::array();
              for (std::size_t i = 0; i < s.gpus.size(); ++i) {
                std::string name;
                try {
                  name = s.gpus[i]->name();
                } catch (const std::exception&) {
                }
                gpus.push_back({{"id", i},
                                {"name", name},
                                {"pci_address", s.devices.gpu_pci_addresses[i]},
                                {"cumulative_energy_available", s.gpu_energy_available[i]}});
              }
              nlohmann::json cpus = nlohmann::json::array();
              for (std::size_t i = 0; i < s.devices.cpus.size(); ++i) {
                cpus.push_back({{"id", i}, {"dram_available", s.cpu_dram_available[i]}});
              }
              nlohmann::json groups = nlohmann::json::array();
              for (ApiGroup g : s.options.enabled) groups.push_back(std::string(api_group_name(g)));
              responder.send(http::Response::json(
                  200, {{"gpus", gpus},
                        {"cpus", cpus},
                        {"enabled_api_groups", groups},
                        {"auth_required", !s.signing_key.empty()},
                        // Ours; upstream clients ignore fields they do not know.
                        {"extensions", {"leases"}}}));
            });
  add_route(s, router, http::Method::kGet, "/time", RouteAccess::anyone(),
            [](http::Request request, http::Responder responder, const Caller&) {
              QueryFields(request.query, {});
              responder.send(http::Response::json(200, {{"timestamp_ms", unix_time_ms()}}));
            });
  add_route(s, router, http::Method::kGet, "/auth/whoami", RouteAccess::any_token(),
            [&s](http::Request request, http::Responder responder, const Caller&) {
              QueryFields(request.query, {});
              // add_route verified the token; read its claims for the answer.
              const auto header = request.headers.get("Authorization");
              const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
              const TokenClaims claims = verify_token(s.signing_key, header->substr(7), now);
              nlohmann::json scopes = nlohmann::json::array();
              for (ApiGroup g : claims.scopes) scopes.push_back(std::string(api_group_name(g)));
              nlohmann::json body = {{"sub", claims.sub}, {"scopes", scopes}};
              if (claims.exp) body["exp"] = *claims.exp;
              responder.send(http::Response::json(200, body));
            });
}

}  // namespace zeus::zeusd
