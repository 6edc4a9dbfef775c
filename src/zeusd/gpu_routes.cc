// The /gpu/* endpoints: control commands through each GPU's worker, reads on
// the I/O thread, and the power stream.
#include <fmt/format.h>

#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>

#include "zeus/util/error.h"
#include "zeus/util/log.h"
#include "zeusd/daemon_state.h"
#include "zeusd/query.h"

namespace zeus::zeusd {
namespace {

// Collects the per-GPU outcomes of one blocking command; the last GPU to
// finish answers, naming the GPUs that were changed when any failed. The
// mutex guards errors, applied and remaining.
struct Gather {
  Gather(http::Responder r, std::size_t n) : responder(std::move(r)), remaining(n) {}
  void done(int gpu, const std::exception* error) {
    std::unique_lock lock(mutex);
    if (error != nullptr) {
      errors.push_back({gpu, {device_error_status(*error), error->what()}});
    } else {
      applied.push_back(gpu);
    }
    if (--remaining > 0) return;
    lock.unlock();
    responder.send(errors.empty() ? http::Response{} : aggregate_errors(errors, applied));
  }
  http::Responder responder;
  std::mutex mutex;
  std::size_t remaining;
  std::vector<std::pair<int, std::pair<int, std::string>>> errors;
  std::vector<int> applied;
};

void run_op(OverriddenGpu& gpu, GpuOp op, const GpuCommandArgs& a) {
  switch (op) {
    case GpuOp::kSetPowerLimit:
      gpu.set_power_limit(Milliwatts(a.power_limit_mw));
      break;
    case GpuOp::kSetPersistenceMode:
      gpu.set_persistence_mode(a.enabled);
      break;
    case GpuOp::kSetGpuLockedClocks:
      gpu.set_gpu_locked_clocks(Megahertz(a.min_clock_mhz), Megahertz(a.max_clock_mhz));
      break;
    case GpuOp::kResetGpuLockedClocks:
      gpu.reset_gpu_locked_clocks();
      break;
    case GpuOp::kSetMemLockedClocks:
      gpu.set_memory_locked_clocks(Megahertz(a.min_clock_mhz), Megahertz(a.max_clock_mhz));
      break;
    case GpuOp::kResetMemLockedClocks:
      gpu.reset_memory_locked_clocks();
      break;
    case GpuOp::kResetLockedClocks:
      gpu.reset_locked_clocks();
      break;
  }
}

// A control request's query: the operation's own arguments, the GPUs, whether
// to wait for the outcome, and the lease it runs under (if any).
struct ControlRequest {
  GpuCommandArgs args;
  std::vector<int> ids;
  bool block = false;
  std::optional<std::string> lease;
};

ControlRequest parse_control_request(const http::Request& request, GpuOp op) {
  ControlRequest c;
  std::optional<QueryFields> q;
  switch (op) {
    case GpuOp::kSetPowerLimit:
      q.emplace(request.query,
                std::vector<std::string_view>{"gpu_ids", "power_limit_mw", "block", "lease_id"});
      c.args.power_limit_mw = q->u32("power_limit_mw");
      break;
    case GpuOp::kSetPersistenceMode:
      q.emplace(request.query,
                std::vector<std::string_view>{"gpu_ids", "enabled", "block", "lease_id"});
      c.args.enabled = q->boolean("enabled");
      break;
    case GpuOp::kSetGpuLockedClocks:
    case GpuOp::kSetMemLockedClocks:
      q.emplace(request.query, std::vector<std::string_view>{"gpu_ids", "min_clock_mhz",
                                                             "max_clock_mhz", "block", "lease_id"});
      c.args.min_clock_mhz = q->u32("min_clock_mhz");
      c.args.max_clock_mhz = q->u32("max_clock_mhz");
      break;
    default:
      q.emplace(request.query, std::vector<std::string_view>{"gpu_ids", "block", "lease_id"});
      break;
  }
  c.ids = parse_device_ids(q->required("gpu_ids"), "GPU");
  c.block = q->boolean("block");
  if (auto l = q->get("lease_id")) c.lease = std::string(*l);
  return c;
}

// Every id is checked before any GPU is touched: one bad id changes
// nothing (and the answer says so).
std::vector<std::pair<int, std::pair<int, std::string>>> unknown_gpu_errors(
    const Daemon::State& s, const std::vector<int>& ids) {
  std::vector<std::pair<int, std::pair<int, std::string>>> errors;
  for (int id : ids) {
    if (id >= static_cast<int>(s.gpus.size())) {
      errors.push_back({id,
                        {400, fmt::format("GPU {} not found (this node has {}); no GPU was changed",
                                          id, s.gpus.size())}});
    }
  }
  return errors;
}

// The command on GPU `id`, under the request's lease when it names one.
void run_control_on(Daemon::State& s, GpuOp op, const ControlRequest& c, int id,
                    const std::string& caller_sub) {
  GpuCommandArgs a = c.args;
  a.gpu_id = id;
  if (c.lease) {
    s.leases->run_under_lease(*c.lease, caller_sub, id, op, a);
  } else {
    run_op(*s.gpus[id], op, a);
  }
}

// Only the enqueue is checked, as upstream.
void post_control(Daemon::State& s, GpuOp op, const ControlRequest& c,
                  const std::string& caller_sub, const http::Responder& responder) {
  std::vector<std::pair<int, std::pair<int, std::string>>> errors;
  for (int id : c.ids) {
    auto task = [&s, op, c, id, sub = caller_sub] {
      try {
        run_control_on(s, op, c, id, sub);
      } catch (const std::exception& e) {
        log::warn("zeusd: {} on GPU {} (non-blocking) failed: {}", gpu_op_name(op), id, e.what());
      }
    };
    if (!s.workers[id]->post(std::move(task))) {
      errors.push_back({id, {500, fmt::format("GPU {} is shutting down", id)}});
    }
  }
  responder.send(errors.empty() ? http::Response{} : aggregate_errors(errors));
}

// Runs the command on every GPU; the last to finish answers (Gather).
void run_control_and_answer(Daemon::State& s, GpuOp op, const ControlRequest& c,
                            const std::string& caller_sub, const http::Responder& responder) {
  const std::vector<int>& valid = c.ids;
  auto gather = std::make_shared<Gather>(responder, valid.size());
  for (int id : valid) {
    auto task = [&s, op, c, id, sub = caller_sub, gather] {
      try {
        run_control_on(s, op, c, id, sub);
        gather->done(id, nullptr);
      } catch (const std::exception& e) {
        gather->done(id, &e);
      }
    };
    // One idle GPU and no override program: run it on this thread, as
    // reads are; several GPUs go to their workers to run in parallel.
    const bool here = valid.size() == 1 && !s.overrides.has(op);
    if (!(here ? s.workers[id]->run_here_or_post(task) : s.workers[id]->post(task))) {
      const Error e(ErrorCode::kInternal, fmt::format("GPU {} is shutting down", id));
      gather->done(id, &e);
    }
  }
}

void add_control(Daemon::State& s, http::Router& router, GpuOp op) {
  add_route(
      s, router, http::Method::kPost, std::string("/gpu/") + gpu_op_name(op),
      RouteAccess::group_of(ApiGroup::kGpuControl),
      [&s, op](http::Request request, http::Responder responder, const Caller& caller) {
        const ControlRequest c = parse_control_request(request, op);
        if (c.lease) {
          try {
            s.leases->check(*c.lease, caller.sub);
          } catch (const Error& e) {
            responder.send(error_response(e.code() == ErrorCode::kNotFound ? 410 : 403, e.what()));
            return;
          }
        }
        const auto errors = unknown_gpu_errors(s, c.ids);
        if (!errors.empty()) {
          responder.send(aggregate_errors(errors, std::vector<int>{}));
          return;
        }
        if (!c.block) {
          post_control(s, op, c, caller.sub, responder);
          return;
        }
        run_control_and_answer(s, op, c, caller.sub, responder);
      });
}

// A read endpoint: {"<id>": value(gpu)} for the requested (or all) GPUs.
template <class F>
void add_read(Daemon::State& s, http::Router& router, const char* path, F value) {
  add_route(
      s, router, http::Method::kGet, path, RouteAccess::group_of(ApiGroup::kGpuRead),
      [&s, value](http::Request request, http::Responder responder, const Caller&) {
        QueryFields q(request.query, {"gpu_ids"});
        std::vector<int> ids;
        if (auto raw = q.get("gpu_ids")) {
          ids = parse_device_ids(*raw, "GPU");
          for (int id : ids) {
            if (id >= static_cast<int>(s.gpus.size())) {
              responder.send(error_response(400, fmt::format("GPU {} not found", id)));
              return;
            }
          }
        } else {
          for (int i = 0; i < static_cast<int>(s.gpus.size()); ++i) ids.push_back(i);
        }
        nlohmann::json out = nlohmann::json::object();
        std::vector<std::pair<int, std::pair<int, std::string>>> errors;
        for (int id : ids) {
          try {
            out[std::to_string(id)] = value(s, id);
          } catch (const std::exception& e) {
            errors.push_back({id, {device_error_status(e), e.what()}});
          }
        }
        responder.send(errors.empty() ? http::Response::json(200, out) : aggregate_errors(errors));
      });
}

std::int64_t mw(Watts w) { return std::llround(w.value() * 1000.0); }

}  // namespace

void add_gpu_routes(Daemon::State& s, http::Router& router) {
  for (GpuOp op : kAllGpuOps) add_control(s, router, op);

  add_read(s, router, "/gpu/get_cumulative_energy", [](Daemon::State& st, int id) {
    if (!st.gpu_energy_available[static_cast<std::size_t>(id)]) {
      throw Error(ErrorCode::kNotSupported,
                  fmt::format("GPU {} has no energy counter (NVIDIA GPUs before Volta)", id));
    }
    return nlohmann::json{
        {"energy_mj", std::llround(st.gpus[id]->total_energy().value() * 1000.0)}};
  });
  add_read(s, router, "/gpu/get_power_limit", [](Daemon::State& st, int id) {
    return nlohmann::json{{"power_limit_mw", st.gpus[id]->power_limit().value()}};
  });
  add_read(s, router, "/gpu/get_power_limit_constraints", [](Daemon::State& st, int id) {
    const auto c = st.gpus[id]->power_limit_constraints();
    return nlohmann::json{{"min_power_limit_mw", c.min.value()},
                          {"max_power_limit_mw", c.max.value()}};
  });
  add_read(s, router, "/gpu/get_persistence_mode", [](Daemon::State& st, int id) {
    return nlohmann::json{{"enabled", st.gpus[id]->persistence_mode()}};
  });

  add_route(
      s, router, http::Method::kGet, "/gpu/get_power", RouteAccess::group_of(ApiGroup::kGpuRead),
      [&s](http::Request request, http::Responder responder, const Caller&) {
        QueryFields q(request.query, {"gpu_ids"});
        std::vector<int> ids;
        if (auto raw = q.get("gpu_ids")) {
          ids = parse_device_ids(*raw, "GPU");
        } else {
          for (int i = 0; i < static_cast<int>(s.gpus.size()); ++i) ids.push_back(i);
        }
        // Hand-written JSON: this is the hot read path.
        std::string body = fmt::format(R"({{"timestamp_ms":{},"power_mw":{{)", unix_time_ms());
        std::vector<std::pair<int, std::pair<int, std::string>>> errors;
        bool first = true;
        for (int id : ids) {
          if (id >= static_cast<int>(s.gpus.size())) {
            errors.push_back({id, {400, fmt::format("GPU {} not found", id)}});
            continue;
          }
          try {
            const auto p = mw(s.gpus[id]->power(device::PowerDomain::kDeviceInstant));
            fmt::format_to(std::back_inserter(body), R"({}"{}":{})", first ? "" : ",", id, p);
            first = false;
          } catch (const std::exception& e) {
            errors.push_back({id, {device_error_status(e), e.what()}});
          }
        }
        body += "}}";
        if (!errors.empty()) {
          responder.send(aggregate_errors(errors));
          return;
        }
        http::Response r = http::Response::text(200, std::move(body), "application/json");
        responder.send(std::move(r));
      });

  add_route(s, router, http::Method::kGet, "/gpu/stream_power",
            RouteAccess::group_of(ApiGroup::kGpuRead),
            [&s](http::Request request, http::Responder responder, const Caller&) {
              QueryFields q(request.query, {"gpu_ids"});
              std::vector<int> ids;
              if (auto raw = q.get("gpu_ids")) {
                ids = parse_device_ids(*raw, "GPU");
                std::string unknown;
                for (int id : ids) {
                  if (id >= static_cast<int>(s.gpus.size())) {
                    unknown += (unknown.empty() ? "" : ", ") + std::to_string(id);
                  }
                }
                if (!unknown.empty()) {
                  responder.send(error_response(
                      400, fmt::format("Unknown GPU indices: [{}]. Available: 0..{}", unknown,
                                       static_cast<int>(s.gpus.size()) - 1)));
                  return;
                }
              } else {
                for (int i = 0; i < static_cast<int>(s.gpus.size()); ++i) ids.push_back(i);
              }
              s.gpu_stream->subscribe(std::move(ids), responder.start_events());
            });
}

}  // namespace zeus::zeusd
