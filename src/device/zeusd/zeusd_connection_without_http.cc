// ZeusdConnection in a build without the HTTP layer (ZEUS_MINIMAL or
// ZEUS_WITH_HTTP=OFF; cmake/zeus_part.cmake compiles the device part with
// ZEUS_WITHOUT_HTTP=1 and leaves out zeusd_connection.cc). Reaching zeusd
// needs the HTTP client, so asking for it (ZEUSD_SOCK_PATH, ZEUSD_HOST_PORT,
// ZEUS_GPU_BACKEND=zeusd) fails with what to do instead of being ignored.
#if defined(ZEUS_WITHOUT_HTTP)

#include <fmt/format.h>

#include "zeus/device/zeusd_backend.h"
#include "zeus/util/error.h"

namespace zeus {

class ZeusdConnection::Impl {};

namespace {
[[noreturn]] void no_http(const std::string& endpoint) {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("zeusd at {} cannot be reached: this build of Zeus has no HTTP client "
                          "(configured with ZEUS_MINIMAL or ZEUS_WITH_HTTP=OFF). Unset "
                          "ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT to use the local devices, or install "
                          "the full build (docs/install.md)",
                          endpoint));
}
}  // namespace

ZeusdConnection::ZeusdConnection(ZeusdConfig config) { no_http(config.endpoint); }
ZeusdConnection::~ZeusdConnection() = default;
void ZeusdConnection::gpu_command(const std::string&, int, const std::string&) {
  no_http(status_.endpoint);
}
std::string ZeusdConnection::get(const std::string&) { no_http(status_.endpoint); }
std::string ZeusdConnection::lease_id() const { return {}; }

}  // namespace zeus

#endif  // ZEUS_WITHOUT_HTTP
