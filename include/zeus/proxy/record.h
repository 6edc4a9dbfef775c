// What the proxy reports: one record per completion (the JSONL log), the
// totals behind the summary printed at exit, and the Prometheus text of
// GET /zeus/metrics.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "zeus/util/units.h"

namespace zeus::proxy {

// One forwarded completion, as logged.
struct RequestRecord {
  std::string request_id;  // "zp-<n>", also the X-Zeus-Request-Id header
  std::string endpoint;    // "/v1/chat/completions"
  std::string model;
  bool stream = false;
  int status = 0;  // upstream status; 502 when it could not be reached
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> output_tokens;
  std::optional<Seconds> ttft;  // streams: until the first event with a token
  Seconds duration{0.0};
  Joules energy{0.0};
  bool cancelled = false;  // the client left before the end
  double start_unix = 0;   // wall-clock start, seconds since the epoch

  std::optional<double> joules_per_output_token() const;
  nlohmann::ordered_json to_json() const;
};

struct ModelTotals {
  std::uint64_t requests = 0;
  std::uint64_t prompt_tokens = 0;
  std::uint64_t output_tokens = 0;
  Joules energy{0.0};
};

struct ProxySummary {
  std::uint64_t requests = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t failed = 0;  // status other than 2xx
  std::uint64_t output_tokens = 0;
  Joules measured{0.0};  // everything the meter saw since start()
  Joules requests_energy{0.0};
  Joules idle{0.0};
  Seconds elapsed{0.0};
  std::map<std::string, ModelTotals> models;
};
// The `zeus monitor`-style lines printed at exit.
std::string format_summary(const ProxySummary& s);

// The Prometheus text exposition of the totals: per-model counters and
// means, idle and measured energy, requests in flight and, when known, the
// measured GPUs' power now.
std::string render_metrics(const ProxySummary& s, std::size_t active,
                           std::optional<Watts> gpu_power);

}  // namespace zeus::proxy
