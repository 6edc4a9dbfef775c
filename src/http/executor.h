// Where asynchronous HTTP work runs: the I/O context (and, for a server
// connection, the strand) of an HTTP server. A handler gets its request's
// from Responder::executor() and gives it to an AsyncClient, so the upstream
// exchange's callbacks run on the same thread, in order with the request's
// own connection, without a thread hop. Opaque (Boost.Asio stays inside
// src/http); copies share one executor.
#pragma once

#include <memory>

namespace zeus::http {

class Executor {
 public:
  struct Impl;  // defined in src/http (wraps a boost::asio::any_io_executor)

  Executor() = default;  // none: valid() is false
  explicit Executor(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  bool valid() const { return impl_ != nullptr; }
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace zeus::http
