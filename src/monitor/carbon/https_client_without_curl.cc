// https_get in a build without libcurl (ZEUS_MINIMAL or ZEUS_WITH_CURL=OFF):
// the hourly providers (ElectricityMaps, OpenEI) say they are not built, and
// the constant and CSV rates keep working.
#if defined(ZEUS_WITHOUT_CURL)

#include <fmt/format.h>

#include "monitor/carbon/https_client.h"
#include "zeus/util/error.h"

namespace zeus::carbon_internal {

HttpsResponse https_get(const std::string& url, const std::vector<std::string>&, Seconds,
                        std::size_t) {
  throw_error(ErrorCode::kNotSupported,
              fmt::format("cannot fetch {}: this build of Zeus has no HTTPS client (configured "
                          "with ZEUS_MINIMAL or ZEUS_WITH_CURL=OFF). Give constant rates "
                          "(--carbon-intensity, --price) or a CSV of hourly rates; or get the "
                          "providers: reinstall with ZEUSCPP_FULL=1 (pip), or configure CMake "
                          "with -DZEUS_WITH_CURL=ON (libcurl4-openssl-dev; docs/install.md)",
                          url));
}

}  // namespace zeus::carbon_internal

#endif  // ZEUS_WITHOUT_CURL
