#include "zeus/optimizer/batch_size/server/http_api.h"

#include <fmt/format.h>

#include "util/json.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::batch_size {
namespace {

using http::Method;
using http::Request;
using http::Responder;
using http::Response;
using nlohmann::json;

// FastAPI's validation answer (422), with our {"message"} beside its "detail".
Response validation_error(const std::string& message, const std::string& field,
                          const char* location = "body") {
  json loc = json::array({location});
  if (!field.empty()) loc.push_back(field);
  return Response::json(
      422, {{"message", message},
            {"detail", json::array({{{"loc", loc}, {"msg", message}, {"type", "value_error"}}})}});
}

Response error_response(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return http::response_for_exception(e);  // RetryLater: 429 with Retry-After
  } catch (const std::exception& e) {
    log::error("bso: request failed: {}", e.what());
    return Response::error(500, "internal server error; the server log has the details");
  }
}

// Answers a Service call once its change is committed.
OutcomeCallback answer(Responder responder) {
  return [responder](Outcome o) {
    if (o.error) {
      responder.send(error_response(o.error));
    } else {
      responder.send(Response::json(o.status, o.body));
    }
  };
}

// Parses a JSON body with `parse`; answers 422 and returns false when it is bad.
template <class T, class Parse>
bool parse_body(const Request& req, const Responder& responder, Parse parse, T& out) {
  try {
    out = parse(parse_json(req.body, "request body"));
    return true;
  } catch (const FieldError& e) {
    responder.send(validation_error(e.what(), e.field()));
  } catch (const Error& e) {  // malformed JSON
    responder.send(validation_error(e.what(), ""));
  }
  return false;
}

// The job_id query parameter; answers 422 and returns nullopt when missing or bad.
std::optional<std::string> job_id_param(const Request& req, const Responder& responder) {
  const auto id = req.query_param("job_id");
  if (!id) {
    responder.send(validation_error("query parameter job_id is required", "job_id", "query"));
    return std::nullopt;
  }
  try {
    check_job_id(*id);
  } catch (const FieldError& e) {
    responder.send(validation_error(e.what(), "job_id", "query"));
    return std::nullopt;
  }
  return std::string(*id);
}

}  // namespace

void add_routes(http::Router& router, Service& service) {
  router.route_async(Method::kPost, "/jobs", [&service](Request req, Responder responder) {
    JobSpec spec;
    if (!parse_body(
            req, responder, [](const json& j) { return parse_job_spec(j); }, spec)) {
      return;
    }
    service.register_job(std::move(spec), answer(responder));
  });

  router.route_async(Method::kDelete, "/jobs", [&service](Request req, Responder responder) {
    if (const auto id = job_id_param(req, responder)) service.delete_job(*id, answer(responder));
  });

  router.route_async(
      Method::kGet, "/jobs/batch_size", [&service](Request req, Responder responder) {
        const auto id = job_id_param(req, responder);
        if (!id) return;
        std::optional<std::string> key;
        if (const auto h = req.headers.get("Idempotency-Key")) {
          key = std::string(*h);
        } else if (const auto q = req.query_param("idempotency_key")) {
          key = std::string(*q);
        }
        if (key && (key->empty() || key->size() > kMaxIdempotencyKeyLength)) {
          responder.send(
              validation_error(fmt::format("the idempotency key must be 1 to {} characters long",
                                           kMaxIdempotencyKeyLength),
                               "idempotency_key", "header"));
          return;
        }
        service.next_batch_size(*id, std::move(key), answer(responder));
      });

  router.route_async(Method::kPost, "/report", [&service](Request req, Responder responder) {
    TrainingResult result;
    if (!parse_body(
            req, responder, [](const json& j) { return parse_training_result(j); }, result)) {
      return;
    }
    service.report(result, answer(responder));
  });

  router.route_async(Method::kPatch, "/trials", [&service](Request req, Responder responder) {
    TrialId trial;
    if (!parse_body(
            req, responder, [](const json& j) { return parse_trial_id(j); }, trial)) {
      return;
    }
    service.end_trial(trial, answer(responder));
  });
}

}  // namespace zeus::batch_size
