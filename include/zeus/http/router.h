// Maps (method, path) to handlers. Paths match exactly; a known path with
// another method answers 405 with an Allow header, an unknown path 404, both
// with the JSON error body. Built before the server starts; dispatch() is
// const and safe from any number of threads.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "zeus/http/exchange.h"
#include "zeus/http/message.h"

namespace zeus::http {

// Answers through the Responder, now or later.
using AsyncHandler = std::function<void(Request request, Responder responder)>;
// Answers by returning; exceptions become error responses (response_for_exception).
using Handler = std::function<Response(const Request& request)>;

class Router {
 public:
  void route(Method method, std::string path, Handler handler);
  void route_async(Method method, std::string path, AsyncHandler handler);

  // Runs the handler for the request; an exception thrown before the handler
  // answered becomes an error response.
  void dispatch(Request request, const Responder& responder) const;

 private:
  std::map<std::string, std::vector<std::pair<Method, AsyncHandler>>> routes_;
};

}  // namespace zeus::http
