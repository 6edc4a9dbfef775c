#include "http/router.h"

#include <fmt/format.h>

#include <string>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::http {

namespace {

// "/a/{x}/b" -> {"a", "{x}", "b"}; a trailing or doubled '/' gives an empty segment.
std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  for (;;) {
    const auto slash = path.find('/');
    out.emplace_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool is_capture(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

void Router::route(Method method, std::string path, Handler handler) {
  route_async(method, std::move(path),
              [h = std::move(handler)](Request request, Responder responder) {
                responder.send(h(request));
              });
}

void Router::route_async(Method method, std::string path, AsyncHandler handler) {
  auto segments = split_path(path);
  bool pattern = false;
  for (const auto& s : segments) pattern = pattern || is_capture(s);
  if (!pattern) {
    routes_[std::move(path)].emplace_back(method, std::move(handler));
    return;
  }
  for (auto& p : patterns_) {
    if (p.path == path) {
      p.handlers.emplace_back(method, std::move(handler));
      return;
    }
  }
  patterns_.push_back(Pattern{std::move(path), std::move(segments), {}});
  patterns_.back().handlers.emplace_back(method, std::move(handler));
}

const Router::Pattern* Router::match(
    const std::string& path, std::vector<std::pair<std::string, std::string>>& params) const {
  if (patterns_.empty()) return nullptr;
  const auto segments = split_path(path);
  for (const auto& p : patterns_) {
    if (p.segments.size() != segments.size()) continue;
    params.clear();
    bool ok = true;
    for (std::size_t i = 0; ok && i < segments.size(); ++i) {
      if (is_capture(p.segments[i])) {
        ok = !segments[i].empty();
        if (ok) params.emplace_back(p.segments[i].substr(1, p.segments[i].size() - 2), segments[i]);
      } else {
        ok = p.segments[i] == segments[i];
      }
    }
    if (ok) return &p;
  }
  params.clear();
  return nullptr;
}

void Router::dispatch(Request request, const Responder& responder) const {
  const Handlers* handlers = nullptr;
  std::string route_path;
  if (const auto it = routes_.find(request.path); it != routes_.end()) {
    handlers = &it->second;
    route_path = it->first;
  } else if (const Pattern* p = match(request.path, request.path_params)) {
    handlers = &p->handlers;
    route_path = p->path;
  }
  if (handlers == nullptr) {
    responder.send(Response::error(404, fmt::format("no such endpoint: {}", request.path)));
    return;
  }
  for (const auto& [method, handler] : *handlers) {
    if (method != request.method) continue;
    try {
      handler(std::move(request), responder);
    } catch (const std::exception& e) {
      if (dynamic_cast<const Error*>(&e) == nullptr) {
        log::error("http: handler for {} {} failed: {}", method_name(method), route_path, e.what());
      }
      responder.send(response_for_exception(e));  // ignored if the handler already answered
    }
    return;
  }
  std::string allow;
  for (const auto& [method, handler] : *handlers) {
    if (!allow.empty()) allow += ", ";
    allow += method_name(method);
  }
  Response r = Response::error(405, fmt::format("{} does not accept {}; it accepts {}", route_path,
                                                method_name(request.method), allow));
  r.headers.set("Allow", allow);
  responder.send(std::move(r));
}

}  // namespace zeus::http
