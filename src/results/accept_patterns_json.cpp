#include "accept_patterns_json.hpp"

#include <fmt/format.h>

namespace ibscope::results {

using nlohmann::json;

json to_json(const std::vector<AcceptPattern>& patterns) {
  json out = json::array();
  for (const AcceptPattern& p : patterns) {
    json flows = json::array();
    for (const AcceptPatternFlow& f : p.flows) {
      flows.push_back({{"host_src", f.host_src}, {"host_dst", f.host_dst}, {"bw_gbps", f.bw_gbps}});
    }
    json j = {{"pattern", p.pattern},
              {"round", p.round},
              {"size_bytes", p.size_bytes},
              {"flows", flows},
              {"aggregate_gbps", p.aggregate_gbps},
              {"expected_gbps", p.expected_gbps},
              {"fairness_jain", p.fairness_jain},
              {"pass", p.pass},
              {"congestion_pct", p.congestion_pct}};
    if (!p.hub_host.empty()) j["hub_host"] = p.hub_host;
    if (!p.reason.empty()) j["reason"] = p.reason;
    if (!p.congestion.empty()) j["congestion"] = p.congestion;
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<AcceptPattern> read_accept_patterns(const FieldReader& in, const json& j,
                                                const std::string& path) {
  std::vector<AcceptPattern> out;
  if (!j.contains("patterns")) return out;
  const json& all = j.at("patterns");
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::string p = fmt::format("{}.patterns[{}]", path, i);
    const json& e = all[i];
    AcceptPattern a;
    a.pattern = in.get<std::string>(e, p, "pattern");
    a.round = in.get<int>(e, p, "round");
    a.hub_host = in.get_or<std::string>(e, p, "hub_host", "");
    a.size_bytes = in.get<std::uint64_t>(e, p, "size_bytes");
    const json& flows = in.at(e, p, "flows");
    for (std::size_t f = 0; f < flows.size(); ++f) {
      const std::string fp = fmt::format("{}.flows[{}]", p, f);
      a.flows.push_back({in.get<std::string>(flows[f], fp, "host_src"),
                         in.get<std::string>(flows[f], fp, "host_dst"),
                         in.get<double>(flows[f], fp, "bw_gbps")});
    }
    a.aggregate_gbps = in.get<double>(e, p, "aggregate_gbps");
    a.expected_gbps = in.get<double>(e, p, "expected_gbps");
    a.fairness_jain = in.get<double>(e, p, "fairness_jain");
    a.pass = in.get<bool>(e, p, "pass");
    a.reason = in.get_or<std::string>(e, p, "reason", "");
    a.congestion_pct = in.get<double>(e, p, "congestion_pct");
    a.congestion = in.get_or<std::string>(e, p, "congestion", "");
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace ibscope::results
