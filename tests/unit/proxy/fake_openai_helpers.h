// A fake OpenAI-compatible inference server for the proxy's tests: it
// "generates" one token per running request per engine step, like a
// continuous-batching server (requests join and leave the batch between
// steps, at most max_batch run at once), and drives a simulated GPU whose
// load is the batch's fill, so its power follows the work. Streams are SSE
// chunks in the OpenAI shape (with the usage chunk when asked); a stream
// whose client left is dropped from the batch and counted as cancelled.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"
#include "zeus/device/sim_gpu.h"

namespace zeus::proxy::testing {

struct FakeServerOptions {
  Seconds step{0.004};  // one engine step (one token for each running request)
  int max_batch = 16;
  // The first step waits until this many requests are waiting, so a test's
  // concurrent requests start in the same step.
  int start_together = 1;
  std::shared_ptr<device::SimGpu> gpu;  // its load follows the batch; may be null
  // Answer 400 to a body with stream_options, like servers that predate it.
  bool reject_stream_options = false;
};

class FakeOpenAiServer {
 public:
  explicit FakeOpenAiServer(FakeServerOptions options);
  ~FakeOpenAiServer();

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  std::size_t cancelled() const;
  std::size_t completed() const;
  // Bodies of the completion requests received, in order.
  std::vector<std::string> bodies() const;
  // Blocks until `n` streams were cancelled (true) or `timeout` passed.
  bool wait_cancelled(std::size_t n, Seconds timeout);

 private:
  struct Generation;
  void engine();

  FakeServerOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Generation>> waiting_;
  std::vector<std::shared_ptr<Generation>> running_;
  std::vector<std::string> bodies_;
  std::size_t cancelled_ = 0;
  std::size_t completed_ = 0;
  bool started_ = false;
  bool stopping_ = false;
  std::unique_ptr<http::Server> server_;
  int port_ = 0;
  std::thread engine_;
};

}  // namespace zeus::proxy::testing
