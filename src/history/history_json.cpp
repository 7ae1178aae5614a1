// The JSON library stays private to the library (src/CMakeLists.txt): this file, results/ and
// model/ use it, no public header includes it.

#include "ibscope/history/history_json.hpp"

#include <nlohmann/json.hpp>

namespace ibscope::history {
namespace {

std::string text_of(const nlohmann::json& j) { return j.dump(1) + "\n"; }

nlohmann::json or_null(double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

std::string to_json(const std::vector<RunRecord>& runs) {
  auto out = nlohmann::json::array();
  for (const auto& r : runs) {
    out.push_back({{"run_id", r.run_id},
                   {"path", r.path},
                   {"tool", r.tool},
                   {"subcommand", r.subcommand},
                   {"command", r.command},
                   {"started_utc", r.started_utc},
                   {"hosts", r.hosts},
                   {"host_count", r.host_count},
                   {"ranks", r.ranks},
                   {"rows", r.rows},
                   {"links", r.links},
                   {"hardware", r.hardware},
                   {"complete", r.complete},
                   {"accept_pass",
                    r.accept_pass ? nlohmann::json(*r.accept_pass) : nlohmann::json(nullptr)}});
  }
  return text_of(out);
}

std::string to_json(const std::vector<LinkRecord>& links) {
  auto out = nlohmann::json::array();
  for (const auto& l : links) {
    out.push_back({{"started_utc", l.started_utc},
                   {"run_id", l.run_id},
                   {"host_a", l.host_a},
                   {"nic_a", l.nic_a},
                   {"host_b", l.host_b},
                   {"nic_b", l.nic_b},
                   {"measured_gbps", l.measured_gbps},
                   {"expected_gbps", or_null(l.expected_gbps)},
                   {"latency_us", or_null(l.latency_us)},
                   {"pass", l.pass},
                   {"verdict", l.verdict},
                   {"counters", l.counters}});
  }
  return text_of(out);
}

std::string to_json(const std::vector<RowRecord>& rows) {
  auto out = nlohmann::json::array();
  for (const auto& r : rows) {
    out.push_back({{"started_utc", r.started_utc},
                   {"run_id", r.run_id},
                   {"kind", r.kind},
                   {"name", r.name},
                   {"algorithm", r.algorithm},
                   {"type", r.type},
                   {"in_place", r.in_place},
                   {"size_bytes", r.size_bytes},
                   {"ranks", r.ranks},
                   {"hosts", r.hosts},
                   {"time_us", or_null(r.time_us)},
                   {"median_us", or_null(r.median_us)},
                   {"spread_pct", r.spread_pct},
                   {"algbw_gbps", or_null(r.algbw_gbps)},
                   {"busbw_gbps", or_null(r.busbw_gbps)},
                   {"busbw_median_gbps", or_null(r.busbw_median_gbps)}});
  }
  return text_of(out);
}

}  // namespace ibscope::history
