// CUDA_VISIBLE_DEVICES as CUDA applies it: whatever the value, the visible
// GPUs are distinct, exist, and form a prefix of the valid entries; only a
// MIG entry is an error.
#include <set>

#include "device/nvml/cuda_visible_devices.h"
#include "fuzz_support.h"
#include "zeus/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> kUuids = {"GPU-aaaa1111", "GPU-aaaa2222", "GPU-bbbb3333",
                                                  "GPU-cccc4444"};
  try {
    const auto v = zeus::nvml_internal::apply_cuda_visible_devices(
        zeus::fuzz::as_text(data, size), 4, [](std::string_view prefix) {
          std::vector<unsigned> out;
          for (unsigned i = 0; i < kUuids.size(); ++i) {
            if (zeus::nvml_internal::uuid_has_prefix(kUuids[i], prefix)) out.push_back(i);
          }
          return out;
        });
    // "Accepted": every entry counted, nothing hidden.
    if (v.hidden.empty()) zeus::fuzz::accepted();
    ZEUS_FUZZ_CHECK(std::set<unsigned>(v.indices.begin(), v.indices.end()).size() ==
                    v.indices.size());
    for (unsigned i : v.indices) ZEUS_FUZZ_CHECK(i < 4);
    ZEUS_FUZZ_CHECK(v.hidden.size() < 4096);
  } catch (const zeus::Error&) {
  }
  return 0;
}
