// Reading grid signals from CSV files. Accepted shapes (the header decides):
//  * `datetime,Carbon Intensity [kg_CO2/kWh]` / `datetime,Electricity Pricing
//    [£/kWh]`: the hourly GB files in data/grid-signals (naive times are UTC);
//  * `location,timestamp,duration,value,hist`: the Chase code's WattTime trace
//    (g/kWh; the controller's column `hist` is used);
//  * ElectricityMaps CSV exports (`Datetime (UTC)`, and a carbon-intensity
//    column, "direct" or "life cycle"/"LCA", in gCO2eq/kWh);
//  * plain `timestamp,value` (any two column names), whose unit must be given.
// The unit is part of the input: when the header states one and the caller
// gives another, or neither states one, the read fails; it is never guessed.
// Every row is checked: times strictly increasing at one resolution (a gap, a
// duplicate or an unsorted row names its line), one UTC offset spelling for
// the whole file, finite values, and no negative carbon intensity.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "zeus/optimizer/power_limit/carbon_aware/grid_signal.h"

namespace zeus::carbon_aware {

struct SignalCsvOptions {
  // The input's unit: "g/kWh", "kg/kWh" (carbon, converted to g/kWh) or
  // "<CUR>/kWh" for a price (e.g. "GBP/kWh", "USD/kWh"; "£" means GBP, "$"
  // USD). Empty: take it from the header; kInvalidArgument if it has none.
  std::string unit;
  // ElectricityMaps exports: "lifecycle" (default) or "direct".
  std::string emission_factor = "lifecycle";
};

// kNotFound/kIo for a missing or unreadable file; kParse naming the file and
// line for bad content; kInvalidArgument for a missing or conflicting unit.
GridSignal read_signal_csv(const std::string& path, const SignalCsvOptions& options = {});
// The same from text; `source` names it in messages.
GridSignal parse_signal_csv(std::string_view text, const std::string& source,
                            const SignalCsvOptions& options = {});

}  // namespace zeus::carbon_aware
