#include "zeus/util/version.h"

namespace zeus {
const char* version() { return ZEUS_VERSION; }
}  // namespace zeus
