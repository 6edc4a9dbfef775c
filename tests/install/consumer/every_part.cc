// Links Zeus::zeus (every part) and uses the parts whose system libraries a
// program gets only through the installed package's dependencies: the SVR
// forecaster (libsvm) and the group trace's .xz reader (liblzma). Exits 1 if
// either does not work as the library documents.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "zeus/optimizer/power_limit/carbon_aware/forecaster.h"
#include "zeus/sim/alibaba.h"
#include "zeus/util/error.h"

int main() {
  try {
    // Two days of an hourly signal with a daily cycle: libsvm fits it.
    if (!zeus::SvrForecaster::available()) {
      std::fprintf(stderr, "every_part: the library was built without libsvm\n");
      return 1;
    }
    std::vector<double> history;
    for (int h = 0; h < 48; ++h) {
      history.push_back(300.0 + 50.0 * std::sin(2.0 * std::numbers::pi * h / 24.0));
    }
    zeus::SvrForecaster svr;
    svr.fit(history, 0, 3600);
    const double next = svr.predict(48 * 3600, history.back());
    std::printf("every_part: SVR fitted=%d, next hour %.1f\n", svr.fitted() ? 1 : 0, next);
    if (!svr.fitted() || !std::isfinite(next) || next < 100.0 || next > 500.0) {
      std::fprintf(stderr, "every_part: implausible SVR forecast\n");
      return 1;
    }
    // Not an xz stream: liblzma's decoder must say so (a parse error).
    const std::string path = "every_part_trace.csv.xz";
    std::ofstream(path) << "group,start_time,end_time,dataset,runtime_ratio\n";
    try {
      zeus::sim::read_group_trace(path);
      std::fprintf(stderr, "every_part: a plain file was read as xz\n");
      return 1;
    } catch (const zeus::Error& e) {
      if (e.code() != zeus::ErrorCode::kParse) {
        throw;
      }
      std::printf("every_part: liblzma refused the plain file: %s\n", e.what());
    }
    std::remove(path.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "every_part: %s\n", e.what());
    return 1;
  }
}
