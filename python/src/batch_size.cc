// zeuscpp.optimizer.batch_size: the library's batch-size optimizer client
// (zeus::batch_size::BatchSizeOptimizer). The job spec crosses as JSON text and is
// validated by the library's own parser, so Python and the server agree on
// every rule and message. Network calls run with the GIL released.
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "binding.h"
#include "monitor_binding.h"
#include "util/json.h"
#include "zeus/optimizer/batch_size/client/client.h"
#include "zeus/optimizer/batch_size/common/api.h"

namespace zeuscpp {
namespace {

// The fields the client fills from the device layer are required by the
// registration parser; placeholders let it check everything the user gave.
zeus::batch_size::JobSpec parse_user_spec(const std::string& spec_json) {
  nlohmann::json body = zeus::parse_json(spec_json, "the job spec");
  if (body.is_object()) {
    for (const char* field : {"max_power", "number_of_gpus", "gpu_model"}) {
      if (body.contains(field)) {
        zeus::throw_error(zeus::ErrorCode::kInvalidArgument,
                          std::string("the job spec: ") + field +
                              " is filled by the client from the monitored GPUs; leave it out");
      }
    }
    body["max_power"] = 1.0;
    body["number_of_gpus"] = 1;
    body["gpu_model"] = "placeholder";
  }
  return zeus::batch_size::parse_job_spec(body, "the job spec");
}

struct ClientBinding {
  py::object monitor;  // the ZeusMonitor the library client measures with, kept alive
  std::unique_ptr<zeus::batch_size::BatchSizeOptimizer> impl;

  ClientBinding() = default;
  ClientBinding(const ClientBinding&) = delete;
  ClientBinding& operator=(const ClientBinding&) = delete;
  // The library client may mark its trial failed on the way out (a request,
  // retried): other Python threads run meanwhile.
  ~ClientBinding() {
    if (impl) {
      ReleaseGil release;
      impl.reset();
    }
  }

  zeus::batch_size::BatchSizeOptimizer& get() { return *impl; }
};

std::unique_ptr<ClientBinding> make_client(py::object monitor, const std::string& server_url,
                                           const std::string& spec_json, int rank, int attempts,
                                           double retry_delay) {
  auto b = std::make_unique<ClientBinding>();
  zeus::monitor::EnergyMonitor& energy_monitor = energy_monitor_of(monitor);
  b->monitor = std::move(monitor);
  zeus::batch_size::JobSpec spec = parse_user_spec(spec_json);
  zeus::batch_size::ClientOptions options;
  options.rank = rank;
  options.attempts = attempts;
  options.retry_delay = zeus::Seconds(retry_delay);
  // Upstream's window name, typo included, so logs and log files match.
  options.window_name = "BatciSizeOptimizerClient";
  ReleaseGil release;
  b->impl = std::make_unique<zeus::batch_size::BatchSizeOptimizer>(energy_monitor, server_url,
                                                                   std::move(spec), options);
  return b;
}

void bind_batch_size(py::module_& core) {
  py::module_ m = core.def_submodule("batch_size", "Batch-size optimizer client bindings.");
  m.def(
      "validate_job_spec",
      [](const std::string& spec_json) {
        return zeus::batch_size::to_json(parse_user_spec(spec_json)).dump();
      },
      py::arg("spec_json"),
      "Checks a job spec (JSON text) as the server would; returns it with defaults filled.");

  using B = ClientBinding;
  py::class_<ClientBinding>(m, "BatchSizeOptimizer",
                            "Core of zeuscpp.optimizer.batch_size.BatchSizeOptimizer.")
      .def(py::init(&make_client), py::arg("monitor"), py::arg("server_url"), py::arg("spec_json"),
           py::arg("rank"), py::arg("attempts"), py::arg("retry_delay"))
      .def(
          "get_batch_size", [](B& b) { return b.get().get_batch_size(); },
          py::call_guard<ReleaseGil>(), "The batch size for this run (rank 0; cached).")
      .def(
          "on_train_begin", [](B& b) { b.get().on_train_begin(); }, py::call_guard<ReleaseGil>(),
          "Starts measuring the first epoch.")
      .def(
          "on_evaluate",
          [](B& b, double metric) {
            zeus::batch_size::ReportResponse r;
            {
              ReleaseGil release;
              r = b.get().on_evaluate(metric);
            }
            py::dict out;
            out["stop_train"] = r.stop_train;
            out["converged"] = r.converged;
            out["message"] = r.message;
            return out;
          },
          py::arg("metric"), "Reports the epoch; the server's answer as a dict.")
      .def(
          "mark_failed", [](B& b) { b.get().mark_failed(); }, py::call_guard<ReleaseGil>(),
          "Marks the running trial failed (no-op without one or after the final report).")
      .def_property_readonly(
          "training_finished", [](B& b) { return b.get().training_finished(); },
          "Whether the server told this run to stop.")
      .def_property_readonly(
          "has_trial", [](B& b) { return b.get().trial().has_value(); },
          "Whether a batch size was obtained.")
      .def_property_readonly(
          "trial_number",
          [](B& b) -> py::object {
            const auto t = b.get().trial();
            if (!t) return py::none();
            return py::int_(t->trial_number);
          },
          "The trial number of this run, or None.")
      .def_property_readonly(
          "job_json", [](B& b) { return zeus::batch_size::to_json(b.get().job()).dump(); },
          "The job as registered (job_id and GPU fields filled), as JSON text.");
}

}  // namespace

ZEUSCPP_BINDING(kOrderClients, bind_batch_size);

}  // namespace zeuscpp
