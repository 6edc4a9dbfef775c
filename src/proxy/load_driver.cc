#include "zeus/proxy/load_driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

#include "util/json.h"
#include "util/text.h"
#include "util/thread_group.h"
#include "zeus/http/client.h"
#include "zeus/proxy/openai.h"
#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::proxy {

namespace {

using steady = std::chrono::steady_clock;

double since(steady::time_point t0) {
  return std::chrono::duration<double>(steady::now() - t0).count();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

std::string request_body(const LoadOptions& o, const std::string& prompt) {
  nlohmann::json body;
  if (!o.model.empty()) body["model"] = o.model;
  if (o.endpoint == "/v1/completions") {
    body["prompt"] = prompt;
  } else {
    body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt}}});
  }
  body["max_tokens"] = o.max_tokens;
  body["stream"] = o.stream;
  if (o.stream) body["stream_options"] = {{"include_usage", true}};
  return body.dump();
}

// The server's answers and the prompt file are not trusted: a value nested
// without bound would make later use recurse without bound. Discarded (as a
// parse error is) when too deep.
nlohmann::json parse_bounded(std::string_view text) {
  if (json_nesting_exceeds(text)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, false);
}

// One answer's numbers.
struct Answer {
  bool ok = false;
  std::string error;
  std::optional<double> ttft;
  double latency = 0;
  std::optional<std::int64_t> prompt_tokens;
  std::optional<std::int64_t> output_tokens;
  std::optional<double> joules;
};

void read_usage_object(const nlohmann::json& doc, Answer& a) {
  const auto u = doc.find("usage");
  if (u == doc.end() || !u->is_object()) return;
  if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer()) {
    a.prompt_tokens = p->get<std::int64_t>();
  }
  if (auto c = u->find("completion_tokens"); c != u->end() && c->is_number_integer()) {
    a.output_tokens = c->get<std::int64_t>();
  }
  if (auto e = u->find("energy"); e != u->end() && e->is_object()) {
    if (auto j = e->find("joules"); j != e->end() && j->is_number()) a.joules = j->get<double>();
  }
}

Answer send_one(http::Client& client, const LoadOptions& o, const std::string& body) {
  Answer a;
  const auto t0 = steady::now();
  http::Headers headers;
  headers.set("Content-Type", "application/json");
  try {
    if (!o.stream) {
      http::Response r = client.request(http::Method::kPost, o.endpoint, body, headers);
      a.latency = since(t0);
      if (r.status / 100 != 2) {
        a.error = fmt::format("status {}: {}", r.status, printable(r.body, 200));
        return a;
      }
      const auto doc = parse_bounded(r.body);
      if (doc.is_object()) read_usage_object(doc, a);
      a.ok = true;
      return a;
    }
    int status = 0;
    std::string error_body;
    EventSplitter splitter;
    client.stream(
        http::Method::kPost, o.endpoint, body, headers,
        [&](const http::ResponseHead& head) {
          status = head.status;
          return true;
        },
        [&](std::string_view bytes) {
          if (status != 200) {
            if (error_body.size() < 200) error_body.append(bytes);
            return true;
          }
          splitter.feed(bytes, [&](std::string_view frame) {
            const EventInfo info = inspect_event(frame);
            if (info.tokens > 0 && !a.ttft) a.ttft = since(t0);
            if (info.usage) {
              const auto doc = parse_bounded(event_data(frame));
              if (doc.is_object()) read_usage_object(doc, a);
            }
          });
          return true;
        });
    a.latency = since(t0);
    if (status != 200) {
      a.error = fmt::format("status {}: {}", status, printable(error_body, 200));
      return a;
    }
    a.ok = true;
  } catch (const std::exception& e) {
    a.latency = since(t0);
    a.error = printable(e.what(), 200);
  }
  return a;
}

void add_answer(LoadResult& result, const Answer& a) {
  if (!a.ok) {
    ++result.failed;
    if (result.first_error.empty()) result.first_error = a.error;
    return;
  }
  ++result.requests;
  result.latencies_s.push_back(a.latency);
  if (a.ttft) result.ttfts_s.push_back(*a.ttft);
  if (a.prompt_tokens && *a.prompt_tokens > 0) result.prompt_tokens += *a.prompt_tokens;
  if (a.output_tokens && *a.output_tokens > 0) result.output_tokens += *a.output_tokens;
  if (a.joules) {
    ++result.with_energy;
    result.energy += Joules(*a.joules);
  }
}

}  // namespace

double LoadResult::joules_per_request() const {
  return with_energy ? energy.value() / static_cast<double>(with_energy) : 0;
}
double LoadResult::joules_per_output_token() const {
  return output_tokens ? energy.value() / static_cast<double>(output_tokens) : 0;
}
double LoadResult::output_tokens_per_second() const {
  return wall.count() > 0 ? static_cast<double>(output_tokens) / wall.count() : 0;
}

LoadResult run_load(const LoadOptions& o) {
  if (o.prompts.empty()) throw_error(ErrorCode::kInvalidArgument, "no prompts to send");
  if (o.concurrency < 1) {
    throw_error(ErrorCode::kInvalidArgument, "the concurrency must be at least 1");
  }
  http::Client(o.url);  // a bad URL fails here, once
  const std::size_t total = o.requests ? o.requests : o.prompts.size();
  LoadResult result;
  std::mutex mutex;
  std::atomic<std::size_t> next{0};
  // Every body is built here, before any thread starts: a prompt the JSON
  // writer refuses is the caller's error, not a thread's.
  std::vector<std::string> bodies;
  bodies.reserve(o.prompts.size());
  for (std::size_t i = 0; i < o.prompts.size(); ++i) {
    if (!is_valid_utf8(o.prompts[i])) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("prompt {} is not valid UTF-8: {}", i + 1, printable(o.prompts[i])));
    }
    bodies.push_back(request_body(o, o.prompts[i]));
  }
  const auto t0 = steady::now();
  const auto n = std::min<std::size_t>(static_cast<std::size_t>(o.concurrency), total);
  const auto client_loop = [&](std::size_t) {
    http::ClientOptions co;
    co.request_timeout = o.timeout;
    http::Client client(o.url, co);
    for (std::size_t i = next++; i < total; i = next++) {
      const Answer a = send_one(client, o, bodies[i % bodies.size()]);
      std::lock_guard lock(mutex);
      add_answer(result, a);
    }
  };
  try {
    run_on_threads(n, client_loop, [&] { next = total; });
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kResourceExhausted) throw;
    throw_error(ErrorCode::kResourceExhausted,
                fmt::format("{} clients: {} (--concurrency)", n, e.what()));
  }
  result.wall = Seconds(since(t0));
  return result;
}

std::string format_load_result(const LoadResult& r) {
  std::string out =
      fmt::format("{} requests ({} failed) in {:.2f} s; {} prompt and {} output tokens\n",
                  r.requests, r.failed, r.wall.count(), r.prompt_tokens, r.output_tokens);
  if (r.with_energy > 0) {
    out += fmt::format("  energy per response   {:.3f} J  ({} answers with energy)\n",
                       r.joules_per_request(), r.with_energy);
    out += fmt::format("  energy per out token  {:.5f} J\n", r.joules_per_output_token());
  } else {
    out += "  energy: no answer carried usage.energy (is the URL the zeus proxy?)\n";
  }
  out +=
      fmt::format("  throughput            {:.1f} output tokens/s\n", r.output_tokens_per_second());
  if (r.requests > 0) {
    out += fmt::format("  response length       {:.1f} tokens (mean)\n",
                       static_cast<double>(r.output_tokens) / static_cast<double>(r.requests));
    out += fmt::format("  latency               p50 {:.3f} s, p90 {:.3f} s\n",
                       percentile(r.latencies_s, 0.5), percentile(r.latencies_s, 0.9));
  }
  if (!r.ttfts_s.empty()) {
    out += fmt::format("  time to first token   p50 {:.3f} s, p90 {:.3f} s\n",
                       percentile(r.ttfts_s, 0.5), percentile(r.ttfts_s, 0.9));
  }
  if (!r.first_error.empty()) out += fmt::format("  first error: {}\n", r.first_error);
  return out;
}

std::vector<std::string> read_prompts(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("the prompt file {} does not exist; give one prompt per line",
                            printable(path, 4096)));
  }
  const std::string text = read_file(path);
  std::vector<std::string> prompts;
  std::size_t start = 0;
  std::size_t line_number = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(start, nl - start);
    start = nl + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!is_valid_utf8(line)) {
      // A request body is JSON, which carries only UTF-8 text.
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{} line {} is not valid UTF-8 text: {}", printable(path, 4096),
                              line_number, printable(line)));
    }
    if (line.front() == '{' || line.front() == '"') {
      const auto doc = parse_bounded(line);
      if (doc.is_string()) {
        prompts.push_back(doc.get<std::string>());
        continue;
      }
      if (doc.is_object() && doc.contains("prompt") && doc["prompt"].is_string()) {
        prompts.push_back(doc["prompt"].get<std::string>());
        continue;
      }
    }
    prompts.push_back(std::move(line));
  }
  if (prompts.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{} has no prompt; write one prompt per line", path));
  }
  return prompts;
}

}  // namespace zeus::proxy
