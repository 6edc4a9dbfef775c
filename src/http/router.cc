#include "zeus/http/router.h"

#include <fmt/format.h>

#include <string>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::http {

void Router::route(Method method, std::string path, Handler handler) {
  route_async(method, std::move(path),
              [h = std::move(handler)](Request request, Responder responder) {
                responder.send(h(request));
              });
}

void Router::route_async(Method method, std::string path, AsyncHandler handler) {
  routes_[std::move(path)].emplace_back(method, std::move(handler));
}

void Router::dispatch(Request request, const Responder& responder) const {
  const auto it = routes_.find(request.path);
  if (it == routes_.end()) {
    responder.send(Response::error(404, fmt::format("no such endpoint: {}", request.path)));
    return;
  }
  for (const auto& [method, handler] : it->second) {
    if (method != request.method) continue;
    try {
      handler(std::move(request), responder);
    } catch (const std::exception& e) {
      if (dynamic_cast<const Error*>(&e) == nullptr) {
        log::error("http: handler for {} {} failed: {}", method_name(method), it->first, e.what());
      }
      responder.send(response_for_exception(e));  // ignored if the handler already answered
    }
    return;
  }
  std::string allow;
  for (const auto& [method, handler] : it->second) {
    if (!allow.empty()) allow += ", ";
    allow += method_name(method);
  }
  Response r = Response::error(405, fmt::format("{} does not accept {}; it accepts {}", it->first,
                                                method_name(request.method), allow));
  r.headers.set("Allow", allow);
  responder.send(std::move(r));
}

}  // namespace zeus::http
