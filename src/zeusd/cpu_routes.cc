// The /cpu/* endpoints (RAPL through the device layer, wraparound-corrected).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "zeus/util/error.h"
#include "zeusd/daemon_state.h"
#include "zeusd/query.h"

namespace zeus::zeusd {
namespace {

std::vector<int> read_ids(const Daemon::State& s, const QueryFields& q) {
  std::vector<int> ids;
  if (auto raw = q.get("cpu_ids")) {
    ids = parse_device_ids(*raw, "CPU");
    for (int id : ids) {
      if (id >= static_cast<int>(s.devices.cpus.size())) {
        throw Error(ErrorCode::kNotFound, fmt::format("CPU {} not found", id));
      }
    }
  } else {
    for (int i = 0; i < static_cast<int>(s.devices.cpus.size()); ++i) ids.push_back(i);
  }
  return ids;
}

std::int64_t uj(Joules j) { return std::llround(j.value() * 1e6); }

}  // namespace

void add_cpu_routes(Daemon::State& s, http::Router& router) {
  add_route(
      s, router, http::Method::kGet, "/cpu/get_cumulative_energy",
      RouteAccess::group_of(ApiGroup::kCpuRead),
      [&s](http::Request request, http::Responder responder, const Caller&) {
        QueryFields q(request.query, {"cpu_ids", "cpu", "dram"});
        const bool cpu = q.boolean("cpu");
        const bool dram = q.boolean("dram");
        const auto ids = read_ids(s, q);
        nlohmann::json out = nlohmann::json::object();
        std::vector<std::pair<int, std::pair<int, std::string>>> errors;
        for (int id : ids) {
          try {
            const device::CpuEnergy e = s.devices.cpus[id]->total_energy();
            out[std::to_string(id)] = {
                {"cpu_energy_uj", cpu ? nlohmann::json(uj(e.package)) : nlohmann::json()},
                {"dram_energy_uj",
                 dram && e.dram ? nlohmann::json(uj(*e.dram)) : nlohmann::json()}};
          } catch (const std::exception& e) {
            errors.push_back({id, {device_error_status(e), e.what()}});
          }
        }
        responder.send(errors.empty() ? http::Response::json(200, out) : aggregate_errors(errors));
      });

  add_route(
      s, router, http::Method::kGet, "/cpu/get_power", RouteAccess::group_of(ApiGroup::kCpuRead),
      [&s](http::Request request, http::Responder responder, const Caller&) {
        QueryFields q(request.query, {"cpu_ids"});
        const auto ids = read_ids(s, q);
        // Two energy readings one poll period apart; the second is taken on
        // the scheduler's thread so no I/O thread sleeps.
        auto first = std::make_shared<std::vector<std::optional<device::CpuEnergy>>>();
        auto errors = std::make_shared<std::vector<std::pair<int, std::pair<int, std::string>>>>();
        for (int id : ids) {
          try {
            first->push_back(s.devices.cpus[id]->total_energy());
          } catch (const std::exception& e) {
            first->push_back(std::nullopt);
            errors->push_back({id, {device_error_status(e), e.what()}});
          }
        }
        const auto t0 = std::chrono::steady_clock::now();
        const auto when = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   Seconds(1.0 / s.options.cpu_power_poll_hz));
        auto finish = [&s, ids, first, errors, t0, responder] {
          nlohmann::json power = nlohmann::json::object();
          for (std::size_t k = 0; k < ids.size(); ++k) {
            if (!(*first)[k]) continue;
            try {
              const device::CpuEnergy e = s.devices.cpus[ids[k]]->total_energy();
              const double us =
                  std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                      .count();
              const auto mw = [&](Joules a, Joules b) {
                return std::llround(std::max(0.0, (b - a).value()) * 1e6 / us * 1000.0);
              };
              const auto& f = *(*first)[k];
              power[std::to_string(ids[k])] = {
                  {"cpu_mw", mw(f.package, e.package)},
                  {"dram_mw",
                   e.dram && f.dram ? nlohmann::json(mw(*f.dram, *e.dram)) : nlohmann::json()}};
            } catch (const std::exception& ex) {
              errors->push_back({ids[k], {device_error_status(ex), ex.what()}});
            }
          }
          responder.send(errors->empty()
                             ? http::Response::json(
                                   200, {{"timestamp_ms", unix_time_ms()}, {"power_mw", power}})
                             : aggregate_errors(*errors));
        };
        if (!s.scheduler.at(when, finish)) finish();
      });

  add_route(s, router, http::Method::kGet, "/cpu/stream_power",
            RouteAccess::group_of(ApiGroup::kCpuRead),
            [&s](http::Request request, http::Responder responder, const Caller&) {
              QueryFields q(request.query, {"cpu_ids"});
              std::vector<int> ids;
              if (auto raw = q.get("cpu_ids")) {
                ids = parse_device_ids(*raw, "CPU");
                std::string unknown;
                for (int id : ids) {
                  if (id >= static_cast<int>(s.devices.cpus.size())) {
                    unknown += (unknown.empty() ? "" : ", ") + std::to_string(id);
                  }
                }
                if (!unknown.empty()) {
                  responder.send(error_response(
                      400, fmt::format("Unknown CPU indices: [{}]. Available: 0..{}", unknown,
                                       static_cast<int>(s.devices.cpus.size()) - 1)));
                  return;
                }
              } else {
                for (int i = 0; i < static_cast<int>(s.devices.cpus.size()); ++i) ids.push_back(i);
              }
              s.cpu_stream->subscribe(std::move(ids), responder.start_events());
            });
}

}  // namespace zeus::zeusd
