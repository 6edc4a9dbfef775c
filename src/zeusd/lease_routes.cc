// Our extension: POST /lease/acquire, /lease/renew, /lease/release.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeus/util/error.h"
#include "zeusd/daemon_state.h"
#include "zeusd/query.h"

namespace zeus::zeusd {
namespace {

nlohmann::json lease_json(const LeaseInfo& info) {
  return {{"lease_id", info.id},
          {"ttl_s", info.ttl ? nlohmann::json(info.ttl->count()) : nlohmann::json(nullptr)},
          {"bound_to_connection", !info.ttl.has_value()}};
}

}  // namespace

void add_lease_routes(Daemon::State& s, http::Router& router) {
  add_route(s, router, http::Method::kPost, "/lease/acquire",
            RouteAccess::group_of(ApiGroup::kGpuControl),
            [&s](http::Request request, http::Responder responder, const Caller& caller) {
              QueryFields q(request.query, {"ttl_s"});
              const auto ttl = q.optional_seconds("ttl_s", s.options.max_lease_ttl_s);
              const LeaseInfo info =
                  s.leases->acquire(caller.sub, request.connection,
                                    ttl ? std::optional<Seconds>(Seconds(*ttl)) : std::nullopt);
              responder.send(http::Response::json(200, lease_json(info)));
            });
  add_route(
      s, router, http::Method::kPost, "/lease/renew", RouteAccess::group_of(ApiGroup::kGpuControl),
      [&s](http::Request request, http::Responder responder, const Caller& caller) {
        QueryFields q(request.query, {"lease_id"});
        const std::string id(q.required("lease_id"));
        try {
          responder.send(http::Response::json(200, lease_json(s.leases->renew(id, caller.sub))));
        } catch (const Error& e) {
          responder.send(error_response(e.code() == ErrorCode::kNotFound ? 410 : 403, e.what()));
        }
      });
  add_route(
      s, router, http::Method::kPost, "/lease/release",
      RouteAccess::group_of(ApiGroup::kGpuControl),
      [&s](http::Request request, http::Responder responder, const Caller& caller) {
        QueryFields q(request.query, {"lease_id"});
        const std::string id(q.required("lease_id"));
        try {
          s.leases->release(id, caller.sub);
          responder.send(http::Response{});
        } catch (const Error& e) {
          responder.send(error_response(e.code() == ErrorCode::kNotFound ? 410 : 403, e.what()));
        }
      });
}

}  // namespace zeus::zeusd
