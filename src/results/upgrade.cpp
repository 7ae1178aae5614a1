#include "upgrade.hpp"

namespace ibscope::results {
namespace {

using nlohmann::json;

constexpr const char* kV1Warning =
    "read from schema version 1: a collective row's time_us is the mean over calls of the "
    "slowest rank's time per call (ibscope before schema 2), not nccl-tests' time per call; "
    "its samples are those per-call maxima (iteration_rank -1)";

void upgrade_collective_row_v1(json& row) {
  if (!row.is_object() || !row.contains("time_us") || !row["time_us"].is_object()) return;
  json stats = std::move(row["time_us"]);
  row["time_us"] = stats.contains("mean") ? stats["mean"] : json(nullptr);
  row["iteration_us"] = std::move(stats);
  row["iteration_rank"] = -1;
  row["average"] = "max";
}

}  // namespace

void upgrade_to_current(json& doc) {
  if (!doc.is_object()) return;
  const auto v = doc.find("schema_version");
  if (v == doc.end() || !v->is_number_integer() || *v != 1) return;
  if (doc.contains("collectives") && doc["collectives"].is_object() &&
      doc["collectives"].contains("rows") && doc["collectives"]["rows"].is_array()) {
    for (json& row : doc["collectives"]["rows"]) upgrade_collective_row_v1(row);
  }
  if (doc.contains("warnings") && doc["warnings"].is_array()) doc["warnings"].push_back(kV1Warning);
  doc["schema_version"] = 2;
}

}  // namespace ibscope::results
