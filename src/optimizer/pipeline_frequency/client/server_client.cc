#include "zeus/optimizer/pipeline_frequency/client/server_client.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

namespace {

ErrorCode code_for(int status) {
  switch (status) {
    case 400:
    case 422:  // FastAPI's validation errors (upstream's server)
      return ErrorCode::kInvalidArgument;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kFailedPrecondition;
    default:
      return ErrorCode::kIo;
  }
}

// The server's own words: our {"message"}, FastAPI's {"detail"}, or the text.
std::string server_message(const http::Response& r) {
  try {
    const auto j = nlohmann::json::parse(r.body);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) {
      return j["message"].get<std::string>();
    }
    if (j.is_object() && j.contains("detail")) {
      return j["detail"].is_string() ? j["detail"].get<std::string>() : j["detail"].dump();
    }
  } catch (const nlohmann::json::exception&) {
  }
  return r.body;
}

}  // namespace

http::ClientOptions ServerClient::default_options() {
  http::ClientOptions o;
  o.request_timeout = Seconds(24.0 * 3600.0);
  return o;
}

ServerClient::ServerClient(std::string url, http::ClientOptions options)
    : url_(std::move(url)), http_(url_, options) {}

http::Response ServerClient::checked(http::Method method, const std::string& target,
                                     const std::string& body) {
  http::Response r;
  try {
    r = method == http::Method::kGet ? http_.get(target) : http_.post_json(target, body);
  } catch (const Error& e) {
    throw Error(e.code(), fmt::format("pipeline-frequency server {}: {} {}: {}", printable(url_),
                                      http::method_name(method), printable(target, 200), e.what()));
  }
  if (r.status != 200) {
    throw Error(code_for(r.status),
                fmt::format("pipeline-frequency server {} answered {} {} with {}: {}",
                            printable(url_), http::method_name(method), printable(target, 200),
                            r.status, printable(server_message(r), 2000)));
  }
  return r;
}

std::string ServerClient::register_job(const JobInfo& info) {
  const auto r = checked(http::Method::kPost, std::string(kRegisterJobPath), to_json(info).dump());
  nlohmann::json id;
  try {
    id = nlohmann::json::parse(r.body);
  } catch (const nlohmann::json::exception&) {
  }
  if (!id.is_string() || id.get_ref<const std::string&>().empty()) {
    throw_error(ErrorCode::kIo, fmt::format("pipeline-frequency server {} returned a strange job "
                                            "id: {}",
                                            printable(url_), printable(r.body)));
  }
  return id.get<std::string>();
}

void ServerClient::register_rank(const std::string& job_id, const RankInfo& info) {
  checked(http::Method::kPost, job_path(kRegisterRankPath, job_id), to_json(info).dump());
}

FrequencySchedule ServerClient::schedule(const std::string& job_id, int rank) {
  const auto r = checked(http::Method::kGet,
                         job_path(kSchedulePath, job_id) + "?rank=" + std::to_string(rank), {});
  auto s = parse_frequency_schedule(r.body);
  if (s.rank != rank) {
    throw_error(ErrorCode::kIo, fmt::format("pipeline-frequency server {} returned a schedule "
                                            "for rank {} to rank {}",
                                            printable(url_), s.rank, rank));
  }
  return s;
}

void ServerClient::report_result(const std::string& job_id, const ProfilingResult& result) {
  checked(http::Method::kPost, job_path(kResultPath, job_id), to_json(result).dump());
}

void ServerClient::set_straggler(const std::string& job_id, std::optional<Seconds> iteration_time) {
  nlohmann::json body = {{"iteration_time", nullptr}};
  if (iteration_time) body["iteration_time"] = iteration_time->count();
  checked(http::Method::kPost, job_path(kStragglerPath, job_id), body.dump());
}

}  // namespace zeus::pipeline_frequency
