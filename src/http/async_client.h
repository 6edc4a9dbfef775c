// An asynchronous HTTP/1.1 client whose exchanges run on an HTTP server's
// I/O threads (an Executor from Responder::executor()), for handlers that
// forward a request upstream and stream the answer back (the energy proxy):
// no thread is held while waiting, and a piece of the body read from
// upstream is handed on from the thread that read it. Keep-alive
// connections are pooled and reused across executors. Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/executor.h"
#include "zeus/http/client.h"
#include "zeus/http/message.h"
#include "zeus/util/error.h"

namespace zeus::http {

// How an asynchronous exchange ended.
struct AsyncOutcome {
  enum class End {
    kComplete,  // the whole body arrived
    kStopped,   // cancel(), or a callback returned false
    kFailed,    // transport failure or timeout; `code` and `message` say which
  };
  End end = End::kComplete;
  ErrorCode code = ErrorCode::kIo;
  std::string message;  // "POST /v1/x on host:port: cannot connect: ..." for kFailed
};

// Every callback runs on the exchange's executor, one at a time.
struct AsyncHandlers {
  // The status and fields. False ends the exchange (kStopped).
  std::function<bool(const ResponseHead&)> on_head;
  // A piece of the body as it arrives (chunked or sized alike). False ends
  // the exchange (kStopped).
  std::function<bool(std::string_view)> on_body;
  // Once, last. Also runs (kStopped) if the executor's context is destroyed
  // before the exchange ends, from that destruction.
  std::function<void(const AsyncOutcome&)> on_done;
};

// One exchange in progress.
class AsyncCall {
 public:
  virtual ~AsyncCall() = default;
  // From any thread: aborts the exchange (a pending connect or read too);
  // on_done(kStopped) follows unless it already ran.
  virtual void cancel() = 0;
  // Only from inside on_body: no further read until resume(), so a slow
  // consumer holds the server back through TCP (back-pressure).
  virtual void pause() = 0;
  // From any thread: reading goes on after a pause().
  virtual void resume() = 0;
};

class AsyncClient {
 public:
  // `base_url` as for Client (kInvalidArgument otherwise). request_timeout
  // bounds the write, the wait for the head and each gap between two body
  // reads; max_response_bytes is not applied (the caller sees every piece).
  // A host name is resolved once, on first use, blocking that thread.
  explicit AsyncClient(std::string_view base_url, ClientOptions options = {},
                       std::size_t max_idle_connections = 64);
  ~AsyncClient();
  AsyncClient(const AsyncClient&) = delete;
  AsyncClient& operator=(const AsyncClient&) = delete;

  // Starts one request on `executor` (from any thread; no callback runs
  // before this returns). A request that fails on a reused connection before
  // any answer arrived is sent once more on a new one.
  std::shared_ptr<AsyncCall> stream(const Executor& executor, Method method, std::string target,
                                    std::string body, const Headers& headers,
                                    AsyncHandlers handlers);

  std::size_t idle_connections() const;  // pooled now (tests)

  struct Shared;  // the pool and target, shared with exchanges in flight

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace zeus::http
