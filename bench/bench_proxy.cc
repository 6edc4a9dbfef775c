// `zeus proxy`'s performance goals (docs/benchmarks.md, "zeus proxy"):
//   * added latency per non-streaming request: <= 200 us at p50 on loopback
//     (BM_Request/proxied minus BM_Request/direct);
//   * added latency per streamed chunk: <= 5 us at p50 (BM_ChunkDelay: each
//     chunk carries its send time; the client's receive time minus it,
//     proxied minus direct);
//   * 1,000 concurrent streams held with bounded memory (BM_ConcurrentStreams:
//     the process's resident memory growth while they run).
// The upstream is an in-process server that answers at once (or streams at a
// fixed pace); the proxy measures a simulated GPU on the steady clock, so the
// numbers are the proxy's own cost, energy counter reads included.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "bench_smoke.h"
#include "http/server.h"
#include "zeus/device/sim_gpu.h"
#include "zeus/http/client.h"
#include "zeus/proxy/attribution.h"
#include "zeus/proxy/openai.h"
#include "zeus/proxy/proxy.h"
#include "zeus/util/log.h"

namespace zeus::bench {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// CPU time of the whole process (every thread), in microseconds.
double process_cpu_us() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double resident_mib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      double kib = 0;
      in >> kib;
      return kib / 1024.0;
    }
    std::getline(in, key);
  }
  return 0;
}

// An OpenAI-shaped upstream that costs nothing: a fixed answer, or a stream
// of `chunks` events `gap` apart whose content is the send time in ns.
class InstantUpstream {
 public:
  InstantUpstream() {
    http::Router router;
    router.route_async(
        http::Method::kPost, "/v1/chat/completions",
        [this](http::Request request, http::Responder responder) {
          const auto body = nlohmann::json::parse(request.body);
          if (!body.value("stream", false)) {
            http::Response r;
            r.headers.set("Content-Type", "application/json");
            r.body = answer_;
            return responder.send(std::move(r));
          }
          const int chunks = body.value("max_tokens", 16);
          const int gap_us = body.value("gap_us", 100);
          auto events = responder.start_events();
          if (gap_us == 0) {  // all at once, from the handler (no thread to start)
            for (int i = 0; i < chunks; ++i) events.send(chunk_event());
            events.send(
                R"({"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}})");
            events.send("[DONE]");
            return events.close();
          }
          std::thread([events, chunks, gap_us]() mutable {
            auto next = std::chrono::steady_clock::now();
            for (int i = 0; i < chunks; ++i) {
              next += std::chrono::microseconds(gap_us);
              std::this_thread::sleep_until(next);
              if (!events.send(chunk_event())) return;
            }
            events.send(
                R"({"id":"c","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}})");
            events.send("[DONE]");
            events.close();
          }).detach();
        });
    http::ServerOptions so;
    so.threads = 2;
    so.max_connections = 8192;
    server_ = std::make_unique<http::Server>(std::move(router), so);
    port_ = server_->listen_tcp("127.0.0.1", 0);
    server_->start();
  }
  std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }

 private:
  // A token chunk whose content is its send time in ns.
  static std::string chunk_event() {
    return fmt::format(
        R"({{"id":"c","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":"{}"}},"finish_reason":null}}]}})",
        now_ns());
  }
  std::string answer_ =
      R"({"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})";
  std::unique_ptr<http::Server> server_;
  int port_ = 0;
};

class ServedProxy {
 public:
  explicit ServedProxy(const std::string& upstream) {
    gpu_ = std::make_shared<device::SimGpu>(device::SimGpuModel{}, SteadyClock::instance());
    proxy::ProxyOptions o;
    o.upstream = upstream;
    o.max_in_flight = 4096;
    proxy_ = std::make_unique<proxy::Proxy>(
        o,
        std::make_unique<proxy::GpuEnergyMeter>(std::vector<std::shared_ptr<device::Gpu>>{gpu_}));
    http::Router router;
    proxy_->add_routes(router);
    http::ServerOptions so;
    so.threads = 2;
    so.max_connections = 8192;
    server_ = std::make_unique<http::Server>(std::move(router), so);
    port_ = server_->listen_tcp("127.0.0.1", 0);
    proxy_->start();
    server_->start();
  }
  ~ServedProxy() {
    proxy_->stop();
    server_->shutdown();
  }
  std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }

 private:
  std::shared_ptr<device::SimGpu> gpu_;
  std::unique_ptr<proxy::Proxy> proxy_;
  std::unique_ptr<http::Server> server_;
  int port_ = 0;
};

InstantUpstream& upstream() {
  static InstantUpstream u;
  return u;
}
ServedProxy& served_proxy() {
  static ServedProxy p(upstream().url());
  return p;
}

// arg 0: straight to the upstream; 1: through the proxy.
void BM_Request(benchmark::State& state) {
  const std::string url = state.range(0) ? served_proxy().url() : upstream().url();
  http::Client client(url);
  const std::string body = R"({"model":"m","messages":[],"max_tokens":1})";
  std::vector<double> us;
  const double cpu0 = process_cpu_us();
  for (auto _ : state) {
    const auto t0 = now_ns();
    const auto r = client.post_json("/v1/chat/completions", body);
    us.push_back(static_cast<double>(now_ns() - t0) / 1e3);
    if (r.status != 200) state.SkipWithError("request failed");
  }
  state.counters["p50_us"] = median(us);
  // Every thread's CPU (client, proxy, upstream) per request.
  state.counters["cpu_us"] = (process_cpu_us() - cpu0) / static_cast<double>(us.size());
}
BENCHMARK(BM_Request)->Arg(0)->Arg(1)->ArgNames({"proxied"})->UseRealTime();

// Streams of 500 chunks 200 us apart; the p50 of receive - send per chunk.
void BM_ChunkDelay(benchmark::State& state) {
  const std::string url = state.range(0) ? served_proxy().url() : upstream().url();
  const std::string body =
      R"({"model":"m","messages":[],"max_tokens":500,"gap_us":200,"stream":true,"stream_options":{"include_usage":true}})";
  std::vector<double> us;
  http::Headers h;
  h.set("Content-Type", "application/json");
  const double cpu0 = process_cpu_us();
  for (auto _ : state) {
    http::Client client(url);
    proxy::EventSplitter splitter;
    client.stream(
        http::Method::kPost, "/v1/chat/completions", body, h,
        [](const http::ResponseHead&) { return true; },
        [&](std::string_view bytes) {
          const auto received = now_ns();
          splitter.feed(bytes, [&](std::string_view frame) {
            const auto at = frame.find("\"content\":\"");
            if (at == std::string_view::npos) return;
            const auto sent = std::stoll(std::string(frame.substr(at + 11, 20)));
            us.push_back(static_cast<double>(received - sent) / 1e3);
          });
          return true;
        });
  }
  state.counters["chunks"] = static_cast<double>(us.size());
  state.counters["p50_us"] = median(us);
  // Every thread's CPU per chunk (the pacing sleeps cost none).
  state.counters["cpu_us"] = (process_cpu_us() - cpu0) / static_cast<double>(us.size());
}
BENCHMARK(BM_ChunkDelay)
    ->Arg(0)
    ->Arg(1)
    ->ArgNames({"proxied"})
    ->UseRealTime()
    ->Iterations(4)
    ->Unit(benchmark::kMillisecond);

// Time to first token of one stream at a time, as an OpenAI client with
// keep-alive sees it: one connection for every iteration (the client's
// requests follow each other on it when the server keeps it), the upstream
// answering at once. Request sent to the first token event received, p50 and
// p90; proxied minus direct is what the proxy adds to a user's TTFT. The
// stream is read to its end before the next request.
void BM_FirstToken(benchmark::State& state) {
  const std::string url = state.range(0) ? served_proxy().url() : upstream().url();
  const std::string body = R"({"model":"m","messages":[],"max_tokens":4,"gap_us":0,"stream":true})";
  http::Headers h;
  h.set("Content-Type", "application/json");
  http::Client client(url);
  std::vector<double> us;
  const double cpu0 = process_cpu_us();
  for (auto _ : state) {
    proxy::EventSplitter splitter;
    bool first = true;
    const auto t0 = now_ns();
    const bool whole = client.stream(
        http::Method::kPost, "/v1/chat/completions", body, h,
        [](const http::ResponseHead& head) { return head.status == 200; },
        [&](std::string_view bytes) {
          const auto received = now_ns();
          splitter.feed(bytes, [&](std::string_view frame) {
            if (first && frame.find("\"content\":\"") != std::string_view::npos) {
              first = false;
              us.push_back(static_cast<double>(received - t0) / 1e3);
            }
          });
          return true;
        });
    if (!whole || first) state.SkipWithError("the stream did not complete");
  }
  std::sort(us.begin(), us.end());
  if (!us.empty()) {
    state.counters["p50_us"] = us[us.size() / 2];
    state.counters["p90_us"] = us[us.size() * 9 / 10];
  }
  state.counters["cpu_us"] = (process_cpu_us() - cpu0) / static_cast<double>(us.size());
}
BENCHMARK(BM_FirstToken)->Arg(0)->Arg(1)->ArgNames({"proxied"})->UseRealTime();

// N streams at once, a chunk every 50 ms for 2 s each, straight to the
// upstream (proxied:0: the client's and the upstream's memory) or through
// the proxy (proxied:1); the difference is the proxy's.
void BM_ConcurrentStreams(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::string url = state.range(1) ? served_proxy().url() : upstream().url();
  const std::string body =
      R"({"model":"m","messages":[],"max_tokens":40,"gap_us":50000,"stream":true})";
  for (auto _ : state) {
    const double before = resident_mib();
    std::atomic<int> done{0}, chunks{0};
    std::atomic<bool> sampling{true};
    double peak = before;
    std::thread sampler([&] {
      while (sampling) {
        peak = std::max(peak, resident_mib());
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    std::vector<std::thread> clients;
    clients.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      clients.emplace_back([&] {
        try {
          http::Headers h;
          h.set("Content-Type", "application/json");
          http::Client c(url);
          c.stream(
              http::Method::kPost, "/v1/chat/completions", body, h,
              [](const http::ResponseHead& head) { return head.status == 200; },
              [&](std::string_view) {
                chunks.fetch_add(1);
                return true;
              });
          done.fetch_add(1);
        } catch (const std::exception&) {
        }
      });
    }
    for (auto& t : clients) t.join();
    sampling = false;
    sampler.join();
    state.counters["completed"] = done.load();
    state.counters["rss_growth_mib"] = peak - before;
    state.counters["rss_per_stream_kib"] = (peak - before) * 1024.0 / n;
  }
}
BENCHMARK(BM_ConcurrentStreams)
    ->Args({zeus::bench::full_or_smoke(1000, 10), 0})
    ->Args({zeus::bench::full_or_smoke(1000, 10), 1})
    ->ArgNames({"streams", "proxied"})
    ->UseRealTime()
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

// The proxy's own work per streamed chunk, without the sockets: what its
// handler does between the read of an upstream chunk and the write to the
// client (split the event, scan it for tokens and usage, count the token
// under the attribution lock, queue the bytes). BM_ChunkDelay's added
// latency is this plus one read and one write system call and the wake-up
// of the proxy's I/O thread.
void BM_ChunkWork(benchmark::State& state) {
  const std::string chunk =
      R"(data: {"id":"chatcmpl-8f2c1d","object":"chat.completion.chunk","created":1764160000,)"
      R"("model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" token"},)"
      R"("logprobs":null,"finish_reason":null}]})"
      "\n\n";
  proxy::EventSplitter splitter;
  proxy::Attributor attributor;
  std::mutex mutex;
  attributor.begin(1, true);
  std::string out;
  long tokens = 0;
  for (auto _ : state) {
    out.clear();
    splitter.feed(chunk, [&](std::string_view frame) {
      const proxy::EventInfo info = proxy::inspect_event(frame);
      tokens += info.tokens;
      out.append(frame);
    });
    {
      std::lock_guard lock(mutex);
      attributor.add_tokens(1, 1.0);
    }
    benchmark::DoNotOptimize(out.data());
  }
  if (tokens != static_cast<long>(state.iterations()))
    state.SkipWithError("a chunk's token was not seen");
}
BENCHMARK(BM_ChunkWork);

// One slice with N active streaming requests: each reports a token, then
// the slice closes. Time per slice should grow linearly in N.
void BM_CloseSlice(benchmark::State& state) {
  const auto n = static_cast<proxy::RequestId>(state.range(0));
  proxy::Attributor a;
  for (proxy::RequestId id = 0; id < n; ++id) a.begin(id, true);
  for (auto _ : state) {
    for (proxy::RequestId id = 0; id < n; ++id) a.add_tokens(id, 1);
    benchmark::DoNotOptimize(a.close_slice(Joules(1.0)));
  }
  state.counters["ns_per_request"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}
BENCHMARK(BM_CloseSlice)->Arg(10)->Arg(100)->Arg(1000)->ArgNames({"active"});

}  // namespace
}  // namespace zeus::bench

int main(int argc, char** argv) {
  zeus::log::set_level(zeus::log::Level::kError);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
