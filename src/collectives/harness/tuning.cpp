#include "ibscope/collectives/harness/tuning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "ibscope/core/error.hpp"

namespace ibscope {
namespace {

bool has_algorithm(Collective c, std::string_view name) {
  for (const auto& a : algorithms_for(c)) {
    if (a.name == name) return true;
  }
  return false;
}

}  // namespace

TuningTable derive_tuning(const std::vector<CollectiveRow>& rows, int hosts) {
  // (collective, ranks) -> size -> algorithm -> summed median time; sizes where an algorithm
  // was wrong are remembered to disqualify it there.
  using Key = std::tuple<std::string, int>;
  std::map<Key, std::map<std::uint64_t, std::map<std::string, double>>> oop, ip;
  std::map<Key, std::map<std::uint64_t, std::map<std::string, bool>>> wrong;
  for (const auto& r : rows) {
    if (r.size_bytes == 0 || r.time_us.n == 0) continue;
    const Key key{r.collective, r.ranks};
    auto& table = r.in_place ? ip : oop;
    table[key][r.size_bytes][r.algorithm] += r.time_us.p50;
    if (r.wrong && *r.wrong > 0) wrong[key][r.size_bytes][r.algorithm] = true;
  }
  TuningTable out;
  out.source = "this run";
  std::map<Key, bool> keys;
  for (const auto& [k, v] : oop) keys[k] = true;
  for (const auto& [k, v] : ip) keys[k] = true;
  for (const auto& [key, unused] : keys) {
    std::map<std::uint64_t, std::map<std::string, double>> by_size = ip[key];
    for (const auto& [size, algos] : oop[key]) by_size[size] = algos;  // out-of-place preferred
    std::map<std::string, bool> algorithms_seen;
    TuningEntry entry{std::get<0>(key), std::get<1>(key), hosts, {}};
    for (const auto& [size, algos] : by_size) {
      std::string best;
      double best_us = 0;
      for (const auto& [name, us] : algos) {
        algorithms_seen[name] = true;
        if (wrong[key][size][name]) continue;
        if (best.empty() || us < best_us) {
          best = name;
          best_us = us;
        }
      }
      if (best.empty()) continue;
      if (!entry.ranges.empty() && entry.ranges.back().algorithm == best) {
        entry.ranges.back().max_bytes = size;
      } else {
        entry.ranges.push_back({size, best});
      }
    }
    if (algorithms_seen.size() < 2 || entry.ranges.empty()) continue;
    entry.ranges.back().max_bytes = UINT64_MAX;
    out.entries.push_back(std::move(entry));
  }
  return out;
}

std::optional<std::string> select_algorithm(const TuningTable& table, Collective c, int ranks,
                                            int hosts, std::uint64_t bytes) {
  for (const auto& e : table.entries) {
    if (e.collective != name_of(c) || e.ranks != ranks || e.hosts != hosts) continue;
    for (const auto& range : e.ranges) {
      if (bytes <= range.max_bytes) return range.algorithm;
    }
  }
  return std::nullopt;
}

std::string default_algorithm(Collective c, int ranks, std::uint64_t bytes) {
  struct Rule {
    std::uint64_t max_bytes;
    std::string_view algorithm;
  };
  static constexpr Rule kAllreduceRules[] = {
      {16 * 1024, "rd"}, {512 * 1024, "rhd"}, {UINT64_MAX, "ring"}};
  if (c == Collective::kAllreduce && ranks > 1) {
    for (const auto& rule : kAllreduceRules) {
      if (bytes <= rule.max_bytes && has_algorithm(c, rule.algorithm)) {
        return std::string(rule.algorithm);
      }
      if (bytes <= rule.max_bytes) break;
    }
  }
  return std::string(algorithms_for(c).front().name);
}

nlohmann::json to_json(const TuningTable& table) {
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

TuningTable tuning_from_json(const nlohmann::json& tuning, const std::string& source) {
  auto bad = [&](const std::string& where, const std::string& why) {
    return UsageError(fmt::format("--tuning {}: {}: {}", source, where, why));
  };
  if (!tuning.is_object() || !tuning.contains("entries") || !tuning["entries"].is_array()) {
    throw bad("tuning", "expected an object with an \"entries\" array");
  }
  TuningTable out;
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
    TuningEntry entry;
    entry.collective = e["collective"].get<std::string>();
    const auto c = collective_named(entry.collective);
    if (!c) throw bad(where, fmt::format("unknown collective '{}'", entry.collective));
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
      TuningRange range;
      range.algorithm = r["algorithm"].get<std::string>();
      if (!has_algorithm(*c, range.algorithm)) {
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

}  // namespace ibscope
