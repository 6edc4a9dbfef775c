// TEMPORARY placeholder until the RAPL backend lands (helper task).
#include "zeus/device/rapl.h"

namespace zeus {
RaplCpuSet open_rapl_cpus(const RaplOptions&) { return {}; }
}  // namespace zeus
