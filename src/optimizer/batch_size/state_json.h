// JSON form of the batch-size search state, kept apart from the algorithms so
// they carry no serialization. Doubles keep every bit: finite values as JSON
// numbers, the others as "inf", "-inf", "nan"; RNG words as hex strings, so
// readers without 64-bit integers lose nothing. Readers throw kParse naming
// the offending field.
#pragma once

#include <nlohmann/json.hpp>

#include "zeus/optimizer/batch_size/batch_size_search.h"
#include "zeus/optimizer/batch_size/gaussian_ts.h"
#include "zeus/optimizer/batch_size/pruning_explorer.h"
#include "zeus/optimizer/batch_size/rng.h"

namespace zeus::batch_size {

// {"algorithm":"xoshiro256**","state":["0x...", x4]}
nlohmann::json rng_to_json(const Rng& rng);
Rng rng_from_json(const nlohmann::json& j);

nlohmann::json explorer_to_json(const PruningExplorer& explorer);
PruningExplorer explorer_from_json(const nlohmann::json& j);

nlohmann::json bandit_to_json(const GaussianThompsonSampling& bandit);
GaussianThompsonSampling bandit_from_json(const nlohmann::json& j);

// The whole search: options, stage, explorer, bandit, RNG, trials in flight.
nlohmann::json search_to_json(const BatchSizeSearch& search);
BatchSizeSearch search_from_json(const nlohmann::json& j);

}  // namespace zeus::batch_size
