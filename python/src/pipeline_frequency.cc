// zeuscpp.optimizer.pipeline_frequency: the library's PipelineFrequencyOptimizer
// on one of the process's GPUs. The job id reaches ranks other than 0 through
// a Python callable (torch.distributed's broadcast_object_list, from
// zeuscpp/optimizer/pipeline_frequency.py), which takes the GIL for the call
// since the optimizer is built with the GIL released.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "binding.h"
#include "zeus/device/devices.h"
#include "zeus/optimizer/pipeline_frequency/client/pipeline_frequency_optimizer.h"
#include "zeus/util/error.h"

namespace zeuscpp {
namespace {

namespace pf = zeus::pipeline_frequency;

// Keeps the inventory (and so the GPU) alive as long as the optimizer, which
// is destroyed first (it restores the GPU's clocks).
struct PipelineFrequencyBinding {
  std::shared_ptr<const zeus::device::DeviceInventory> inventory;
  std::unique_ptr<pf::PipelineFrequencyOptimizer> impl;

  pf::PipelineFrequencyOptimizer& get() const {
    if (!impl) {
      zeus::throw_error(zeus::ErrorCode::kFailedPrecondition,
                        "the PipelineFrequencyOptimizer is not initialized");
    }
    return *impl;
  }
};

std::unique_ptr<PipelineFrequencyBinding> make(
    int device_id, int rank, int dp_rank, int pp_rank, int tp_rank, int dp_degree, int pp_degree,
    int tp_degree, int world_size, std::string server_url, std::optional<std::string> job_metadata,
    std::optional<std::string> job_id, py::object broadcast, int report_every) {
  auto b = std::make_unique<PipelineFrequencyBinding>();
  b->inventory = device_inventory();
  if (device_id < 0 || static_cast<std::size_t>(device_id) >= b->inventory->gpus.size()) {
    (void)zeus::device::select_devices(*b->inventory, std::vector<int>{device_id},
                                       std::vector<int>{});
  }
  pf::PipelineFrequencyOptimizerOptions o;
  o.rank = rank;
  o.dp_rank = dp_rank;
  o.pp_rank = pp_rank;
  o.tp_rank = tp_rank;
  o.dp_degree = dp_degree;
  o.pp_degree = pp_degree;
  o.tp_degree = tp_degree;
  o.world_size = world_size;
  o.server_url = std::move(server_url);
  o.job_metadata = std::move(job_metadata);
  o.job_id = std::move(job_id);
  o.report_every = report_every;
  if (!broadcast.is_none()) {
    auto fn = std::shared_ptr<py::object>(new py::object(std::move(broadcast)), [](py::object* p) {
      py::gil_scoped_acquire gil;
      delete p;
    });
    o.broadcast_job_id = [fn](const std::optional<std::string>& id) {
      py::gil_scoped_acquire gil;
      const py::object got = (*fn)(id ? py::object(py::str(*id)) : py::object(py::none()));
      if (!py::isinstance<py::str>(got)) {
        zeus::throw_error(zeus::ErrorCode::kInvalidArgument, "the job id broadcast returned " +
                                                                 py::repr(got).cast<std::string>() +
                                                                 ", not a string");
      }
      return got.cast<std::string>();
    };
  }
  const auto gpu = b->inventory->gpus[static_cast<std::size_t>(device_id)];
  {
    ReleaseGil release;
    b->impl = std::make_unique<pf::PipelineFrequencyOptimizer>(gpu, std::move(o));
  }
  return b;
}

void bind_pipeline_frequency(py::module_& core) {
  py::module_ m = py::hasattr(core, "optimizer")
                      ? py::reinterpret_borrow<py::module_>(core.attr("optimizer"))
                      : core.def_submodule("optimizer", "Optimizer bindings.");
  using B = PipelineFrequencyBinding;
  py::class_<B>(m, "PipelineFrequencyOptimizer", py::dynamic_attr(),
                "Core of zeuscpp.optimizer.pipeline_frequency.PipelineFrequencyOptimizer.")
      .def(py::init(&make), py::arg("device_id"), py::arg("rank"), py::arg("dp_rank"),
           py::arg("pp_rank"), py::arg("tp_rank"), py::arg("dp_degree"), py::arg("pp_degree"),
           py::arg("tp_degree"), py::arg("world_size"), py::arg("server_url"),
           py::arg("job_metadata"), py::arg("job_id"), py::arg("broadcast"),
           py::arg("report_every"))
      .def(
          "on_step_begin", [](B& b) { b.get().on_step_begin(); }, py::call_guard<ReleaseGil>())
      .def(
          "on_step_end", [](B& b) { b.get().on_step_end(); }, py::call_guard<ReleaseGil>())
      .def(
          "on_instruction_begin",
          [](B& b, const std::string& name) { b.get().on_instruction_begin(name); },
          py::arg("name"), py::call_guard<ReleaseGil>())
      .def(
          "on_instruction_end",
          [](B& b, const std::string& name) { b.get().on_instruction_end(name); }, py::arg("name"))
      .def(
          "flush", [](B& b) { b.get().controller().flush(); }, py::call_guard<ReleaseGil>(),
          "Waits until the frequencies asked for so far are applied.")
      .def("close",
           [](B& b) {
             ReleaseGil release;
             b.impl.reset();
           })
      .def_property_readonly("job_id", [](const B& b) { return b.get().job_id(); })
      .def_property_readonly("frequencies",
                             [](const B& b) {
                               py::list out;
                               for (const auto& e : b.get().schedule().frequencies) {
                                 out.append(py::make_tuple(e.instruction, e.frequency.value()));
                               }
                               return out;
                             })
      .def_property_readonly(
          "current_frequency",
          [](const B& b) { return b.get().controller().current_frequency().value(); })
      .def_property_readonly("frequency_changes",
                             [](const B& b) { return b.get().controller().changes(); });
}

ZEUSCPP_BINDING(kOrderClients, bind_pipeline_frequency);

}  // namespace
}  // namespace zeuscpp
