#include "tuning_json.hpp"

#include <fmt/format.h>

#include <limits>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::results {

nlohmann::json to_json(const collectives::TuningTable& table) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : table.entries) {
    nlohmann::json ranges = nlohmann::json::array();
    for (const auto& r : e.ranges) {
      ranges.push_back({{"max_bytes", r.max_bytes == UINT64_MAX ? nlohmann::json(nullptr)
                                                                : nlohmann::json(r.max_bytes)},
                        {"algorithm", r.algorithm}});
    }
    entries.push_back(
        {{"collective", e.collective}, {"ranks", e.ranks}, {"hosts", e.hosts}, {"ranges", ranges}});
  }
  return {{"entries", entries}};
}

collectives::TuningTable tuning_from_json(const nlohmann::json& tuning, const std::string& source,
                                          TuningUse use) {
  auto bad = [&](const std::string& where, const std::string& why) {
    return UsageError(fmt::format("{}{}: {}: {}", use == TuningUse::kSelect ? "--tuning " : "",
                                  source, where, why));
  };
  if (!tuning.is_object() || !tuning.contains("entries") || !tuning["entries"].is_array()) {
    throw bad("tuning", "expected an object with an \"entries\" array");
  }
  collectives::TuningTable out;
  out.source = source;
  for (std::size_t i = 0; i < tuning["entries"].size(); ++i) {
    const auto& e = tuning["entries"][i];
    const std::string where = fmt::format("tuning.entries[{}]", i);
    if (!e.is_object() || !e.contains("collective") || !e["collective"].is_string() ||
        !e.contains("ranks") || !e["ranks"].is_number_integer() || !e.contains("hosts") ||
        !e["hosts"].is_number_integer() || !e.contains("ranges") || !e["ranges"].is_array() ||
        e["ranges"].empty()) {
      throw bad(where,
                "expected collective (string), ranks and hosts (integers), ranges "
                "(non-empty array)");
    }
    collectives::TuningEntry entry;
    entry.collective = e["collective"].get<std::string>();
    const auto c = collective_named(entry.collective);
    if (!c && use == TuningUse::kSelect) {
      throw bad(where, fmt::format("unknown collective '{}'", entry.collective));
    }
    // Compared as 64-bit values: get<int>() would read 4294967297 as 1 (and an unsigned value
    // above 2^63 reads as negative here, so it is refused too).
    const auto ranks = e["ranks"].get<std::int64_t>();
    const auto hosts = e["hosts"].get<std::int64_t>();
    constexpr std::int64_t kMaxCount = std::numeric_limits<int>::max();
    if (ranks < 1 || hosts < 1 || ranks > kMaxCount || hosts > kMaxCount) {
      throw bad(where, fmt::format("ranks and hosts must be 1..{}", kMaxCount));
    }
    entry.ranks = static_cast<int>(ranks);
    entry.hosts = static_cast<int>(hosts);
    std::uint64_t previous = 0;
    for (std::size_t j = 0; j < e["ranges"].size(); ++j) {
      const auto& r = e["ranges"][j];
      const std::string rwhere = fmt::format("{}.ranges[{}]", where, j);
      const bool last = j + 1 == e["ranges"].size();
      if (!r.is_object() || !r.contains("algorithm") || !r["algorithm"].is_string() ||
          !r.contains("max_bytes")) {
        throw bad(rwhere, "expected max_bytes and algorithm");
      }
      collectives::TuningRange range;
      range.algorithm = r["algorithm"].get<std::string>();
      if (use == TuningUse::kSelect && !collectives::has_algorithm(*c, range.algorithm)) {
        throw bad(rwhere, fmt::format("algorithm '{}' is not a {} algorithm of this build",
                                      range.algorithm, entry.collective));
      }
      if (r["max_bytes"].is_null()) {
        if (!last) throw bad(rwhere, "only the last range may be open-ended (max_bytes null)");
      } else if (r["max_bytes"].is_number_integer() && r["max_bytes"].get<std::int64_t>() >= 0) {
        range.max_bytes = r["max_bytes"].get<std::uint64_t>();
        if (j > 0 && range.max_bytes <= previous) {
          throw bad(rwhere, "max_bytes must increase from range to range");
        }
        previous = range.max_bytes;
      } else {
        throw bad(rwhere, "max_bytes must be a non-negative integer or null");
      }
      if (last) range.max_bytes = UINT64_MAX;  // sizes above the last measured one
      entry.ranges.push_back(std::move(range));
    }
    out.entries.push_back(std::move(entry));
  }
  return out;
}

}  // namespace ibscope::results
