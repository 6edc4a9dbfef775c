// The client side of the pipeline-frequency server's API: one call per
// endpoint, with upstream's paths and bodies, over the project's HTTP client.
// A non-200 answer becomes a zeus::Error carrying the server's message
// (400 kInvalidArgument, 404 kNotFound, 409 kFailedPrecondition, other
// kIo). Not thread-safe: one per thread, like http::Client.
#pragma once

#include <optional>
#include <string>

#include "zeus/http/client.h"
#include "zeus/optimizer/pipeline_frequency/common/messages.h"

namespace zeus::pipeline_frequency {

class ServerClient {
 public:
  // `url`: "http://host:port" or "unix:/path". Schedule requests wait for
  // every rank, so the default request timeout is a day.
  explicit ServerClient(std::string url, http::ClientOptions options = default_options());
  static http::ClientOptions default_options();

  std::string register_job(const JobInfo& info);
  void register_rank(const std::string& job_id, const RankInfo& info);
  // Blocks until the server answers (every rank of the job has asked).
  FrequencySchedule schedule(const std::string& job_id, int rank);
  void report_result(const std::string& job_id, const ProfilingResult& result);
  void set_straggler(const std::string& job_id, std::optional<Seconds> iteration_time);

  const std::string& url() const { return url_; }

 private:
  http::Response checked(http::Method method, const std::string& target, const std::string& body);

  std::string url_;
  http::Client http_;
};

}  // namespace zeus::pipeline_frequency
