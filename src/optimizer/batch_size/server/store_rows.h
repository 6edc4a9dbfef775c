// What the SQLite and PostgreSQL stores share: the schema and how a stored
// trial row becomes a TrialRecord.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "zeus/optimizer/batch_size/server/store.h"

namespace zeus::batch_size {

// Schema version 1, in SQL both databases accept.
const std::vector<const char*>& schema_v1_statements();

// kFailedPrecondition when the database was written by a newer zeus.
void check_schema_version(int stored, const std::string& where);

TrialRecord trial_from_row(std::int64_t number, int batch_size, const std::string& kind,
                           const std::string& status, const std::string& key, double start_time,
                           std::optional<double> end_time, std::optional<double> time,
                           std::optional<double> energy, std::optional<double> converged);

}  // namespace zeus::batch_size
