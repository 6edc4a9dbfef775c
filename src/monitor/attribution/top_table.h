// `zeus top`'s table: who is using each GPU and CPU zone now, rendered from
// the ledger's JSON (NodeAttributor::json, zeusd's GET /attribution) so the
// same text comes from a local ledger and from a daemon's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zeus::attribution {

struct TopOptions {
  std::size_t rows_per_device = 10;  // consumers shown per device, by power
  bool processes = true;             // GPU rows per process when the JSON has them
};

// kParse when `ledger_json` is not the ledger's JSON.
std::string render_top(std::string_view ledger_json, const TopOptions& options = {});

}  // namespace zeus::attribution
