#include "zeus/optimizer/pipeline_frequency/server/http_api.h"

#include <fmt/format.h>

#include <charconv>

#include "util/json.h"
#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

namespace {

int rank_param(const http::Request& request) {
  const auto text = request.query_param("rank");
  if (!text) {
    throw_error(ErrorCode::kInvalidArgument, "the query parameter rank is required (?rank=N)");
  }
  int rank = -1;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), rank);
  if (ec != std::errc() || end != text->data() + text->size() || rank < 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("rank must be a non-negative integer, got '{}'", printable(*text)));
  }
  return rank;
}

std::optional<Seconds> straggler_time(std::string_view body) {
  const auto doc = parse_json(body, "straggler body");
  const JsonObject o(doc, "straggler body");
  o.reject_unknown_keys({"iteration_time"});
  if (!o.has("iteration_time")) return std::nullopt;  // missing or null: recovered
  return Seconds(o.number("iteration_time", 1e-9, 1e7));
}

}  // namespace

void add_routes(http::Router& router, JobManager& manager) {
  router.route(http::Method::kPost, std::string(kRegisterJobPath),
               [&manager](const http::Request& q) {
                 return http::Response::json(200, manager.register_job(parse_job_info(q.body)));
               });
  router.route(
      http::Method::kPost, std::string(kRegisterRankPath), [&manager](const http::Request& q) {
        manager.register_rank(std::string(q.path_param("job_id")), parse_rank_info(q.body));
        return http::Response::json(200, nullptr);
      });
  router.route_async(
      http::Method::kGet, std::string(kSchedulePath),
      [&manager](http::Request q, http::Responder responder) {
        manager.request_schedule(
            std::string(q.path_param("job_id")), rank_param(q),
            [responder](ScheduleOutcome outcome) {
              if (outcome.error) {
                responder.send(http::response_for_exception(*outcome.error));
              } else {
                responder.send(http::Response::json(200, to_json(*outcome.schedule)));
              }
            });
      });
  router.route(http::Method::kPost, std::string(kResultPath), [&manager](const http::Request& q) {
    manager.report_result(std::string(q.path_param("job_id")), parse_profiling_result(q.body));
    return http::Response::json(200, nullptr);
  });
  router.route(http::Method::kPost, std::string(kStragglerPath),
               [&manager](const http::Request& q) {
                 manager.set_straggler(std::string(q.path_param("job_id")), straggler_time(q.body));
                 return http::Response::json(200, nullptr);
               });
}

}  // namespace zeus::pipeline_frequency
