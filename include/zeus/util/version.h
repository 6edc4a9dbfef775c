#pragma once

namespace zeus {
// The library's version, e.g. "0.1.0".
const char* version();
}  // namespace zeus
