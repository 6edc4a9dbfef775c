// Links Zeus::zeus (every installed part) and uses the parts whose system
// libraries a program gets only through the installed package's
// dependencies: the SVR forecaster (libsvm) and the carbon providers' HTTP
// client (libcurl). Exits 1 if either does not work as the library documents.
// (The simulator's .xz reader, liblzma, is a part only the project's programs
// use: its headers are not installed.)
#include <cmath>
#include <cstdio>
#include <exception>
#include <numbers>
#include <string>
#include <vector>

#include "zeus/monitor/carbon/electricity_maps.h"
#include "zeus/optimizer/power_limit/carbon_aware/forecaster.h"
#include "zeus/util/error.h"

int main() {
  try {
    // Two days of an hourly signal with a daily cycle: libsvm fits it.
    if (!zeus::carbon_aware::SvrForecaster::available()) {
      std::fprintf(stderr, "every_part: the library was built without libsvm\n");
      return 1;
    }
    std::vector<double> history;
    for (int h = 0; h < 48; ++h) {
      history.push_back(300.0 + 50.0 * std::sin(2.0 * std::numbers::pi * h / 24.0));
    }
    zeus::carbon_aware::SvrForecaster svr;
    svr.fit(history, 0, 3600);
    const double next = svr.predict(48 * 3600, history.back());
    std::printf("every_part: SVR fitted=%d, next hour %.1f\n", svr.fitted() ? 1 : 0, next);
    if (!svr.fitted() || !std::isfinite(next) || next < 100.0 || next > 500.0) {
      std::fprintf(stderr, "every_part: implausible SVR forecast\n");
      return 1;
    }
    // Nothing listens on the discard port: libcurl must say the connection
    // failed, as the provider's error (never a crash or a hang).
    zeus::carbon::ElectricityMapsOptions o;
    o.base_url = "http://127.0.0.1:9";
    o.api_token = "";
    o.timeout = zeus::Seconds(5.0);
    zeus::carbon::ElectricityMapsClient provider(o);
    try {
      provider.latest();
      std::fprintf(stderr, "every_part: a closed port answered\n");
      return 1;
    } catch (const zeus::Error& e) {
      std::printf("every_part: libcurl reported the closed port: %s\n", e.what());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "every_part: %s\n", e.what());
    return 1;
  }
}
