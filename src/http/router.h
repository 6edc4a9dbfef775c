// Maps (method, path) to handlers. A route's path matches exactly, except
// that a segment written "{name}" matches any one non-empty segment, whose
// decoded text the handler finds in Request::path_params ("/schedule/{job_id}"
// matches "/schedule/2024-05-01+dp1"; exact routes win over patterns). A known
// path with another method answers 405 with an Allow header, an unknown path
// 404, both with the JSON error body. Built before the server starts;
// dispatch() is const and safe from any number of threads.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "http/exchange.h"
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
  using Handlers = std::vector<std::pair<Method, AsyncHandler>>;
  struct Pattern {
    std::string path;                   // as registered, for messages
    std::vector<std::string> segments;  // "{name}" segments capture
    Handlers handlers;
  };
  // The pattern route matching `path` (filling `params`), or nullptr.
  const Pattern* match(const std::string& path,
                       std::vector<std::pair<std::string, std::string>>& params) const;

  std::map<std::string, Handlers> routes_;  // exact paths
  std::vector<Pattern> patterns_;           // paths with "{name}" segments, in order
};

}  // namespace zeus::http
