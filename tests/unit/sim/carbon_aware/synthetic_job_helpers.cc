#include "synthetic_job_helpers.h"

namespace zeus::sim::carbon_aware::testing {

JobProfile three_limit_profile() {
  JobProfile p;
  p.per_epoch = {{Milliwatts(250'000), Joules(500'000.0), Seconds(2000.0)},
                 {Milliwatts(300'000), Joules(540'000.0), Seconds(1800.0)},
                 {Milliwatts(200'000), Joules(480'000.0), Seconds(2400.0)}};
  p.profile_time = Seconds(3000.0);
  p.profile_energy = Joules(750'000.0);
  return p;
}

zeus::carbon_aware::GridSignal hourly_signal(const std::vector<double>& values) {
  return zeus::carbon_aware::GridSignal(zeus::carbon_aware::SignalKind::kCarbon, "gCO2/kWh", kT0,
                                        kHour, values, kSource);
}

zeus::carbon_aware::GridSignal hourly_signal(int hours, const std::function<double(int)>& f) {
  std::vector<double> v;
  for (int h = 0; h < hours; ++h) v.push_back(f(h));
  return hourly_signal(v);
}

}  // namespace zeus::sim::carbon_aware::testing
