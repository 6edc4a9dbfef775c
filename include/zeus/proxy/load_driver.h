// `zeus proxy bench`: a closed-loop load driver for an OpenAI-compatible
// server behind `zeus proxy serve`. `concurrency` clients each send the next
// prompt as soon as their previous answer ended, until `requests` answers;
// it reads each answer's usage (with the proxy's energy) and reports the
// ML.ENERGY Leaderboard's numbers: energy per response (J), energy per
// output token (J: all energy over all output tokens), throughput (output
// tokens/s over the run) and latency, plus time to first token for streams.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::proxy {

struct LoadOptions {
  std::string url;                                // the proxy: "http://host:port"
  std::string endpoint = "/v1/chat/completions";  // or /v1/completions
  std::string model;
  std::vector<std::string> prompts;  // used in turn
  int concurrency = 1;
  std::size_t requests = 0;  // 0: one per prompt
  bool stream = true;
  int max_tokens = 128;
  Seconds timeout{600.0};
};

struct LoadResult {
  std::size_t requests = 0;  // answered with 2xx
  std::size_t failed = 0;
  std::size_t with_energy = 0;  // answers that carried usage.energy
  std::uint64_t prompt_tokens = 0;
  std::uint64_t output_tokens = 0;
  Joules energy{0.0};  // sum of the answers' usage.energy.joules
  Seconds wall{0.0};
  std::vector<double> latencies_s;
  std::vector<double> ttfts_s;  // streams only
  std::string first_error;

  double joules_per_request() const;
  double joules_per_output_token() const;
  double output_tokens_per_second() const;
};

// kInvalidArgument for no prompts, a concurrency below 1 or a bad URL.
LoadResult run_load(const LoadOptions& options);
std::string format_load_result(const LoadResult& result);

// Prompts from a file: one per line, either plain text or a JSON string or
// object with a "prompt" field (JSONL); blank lines are skipped. kInvalidArgument
// for a file with none, naming it.
std::vector<std::string> read_prompts(const std::string& path);

}  // namespace zeus::proxy
