#include "congestion_json.hpp"

#include <fmt/format.h>

namespace ibscope::results {

using nlohmann::json;

json to_json(const AcceptCongestion& c) {
  json impacts = json::array();
  for (const auto& i : c.impacts) {
    impacts.push_back({{"congestor", i.congestor},
                       {"metric", i.metric},
                       {"isolated", i.isolated},
                       {"congested", i.congested},
                       {"impact", i.impact},  // NaN is written as null
                       {"max_impact", i.max_impact},
                       {"tail", i.tail},
                       {"pass", i.pass}});
  }
  json loads = json::array();
  for (const auto& l : c.loads) {
    loads.push_back({{"congestor", l.congestor},
                     {"rounds", l.rounds},
                     {"seconds", l.seconds},
                     {"received_gbps", l.received_gbps}});
  }
  return {{"pass", c.pass},
          {"by_host", c.by_host},
          {"victim_ranks", c.victim_ranks},
          {"victim_hosts", c.victim_hosts},
          {"congestor_ranks", c.congestor_ranks},
          {"congestor_hosts", c.congestor_hosts},
          {"victim_pairs", c.victim_pairs},
          {"latency_bytes", c.latency_bytes},
          {"allreduce_bytes", c.allreduce_bytes},
          {"congestor_bytes", c.congestor_bytes},
          {"latency_iters", c.latency_iters},
          {"allreduce_iters", c.allreduce_iters},
          {"max_impact", c.max_impact},
          {"max_tail_impact", c.max_tail_impact},
          {"impacts", impacts},
          {"loads", loads}};
}

AcceptCongestion read_congestion(const FieldReader& in, const json& j, const std::string& p) {
  AcceptCongestion c;
  c.pass = in.get<bool>(j, p, "pass");
  c.by_host = in.get<bool>(j, p, "by_host");
  c.victim_ranks = in.get<std::vector<int>>(j, p, "victim_ranks");
  c.victim_hosts = in.get<std::vector<std::string>>(j, p, "victim_hosts");
  c.congestor_ranks = in.get<int>(j, p, "congestor_ranks");
  c.congestor_hosts = in.get<int>(j, p, "congestor_hosts");
  c.victim_pairs = in.get<int>(j, p, "victim_pairs");
  c.latency_bytes = in.get<std::uint64_t>(j, p, "latency_bytes");
  c.allreduce_bytes = in.get<std::uint64_t>(j, p, "allreduce_bytes");
  c.congestor_bytes = in.get<std::uint64_t>(j, p, "congestor_bytes");
  c.latency_iters = in.get<int>(j, p, "latency_iters");
  c.allreduce_iters = in.get<int>(j, p, "allreduce_iters");
  c.max_impact = in.get<double>(j, p, "max_impact");
  c.max_tail_impact = in.get<double>(j, p, "max_tail_impact");
  const json& impacts = in.at(j, p, "impacts");
  for (std::size_t k = 0; k < impacts.size(); ++k) {
    const std::string ip = fmt::format("{}.impacts[{}]", p, k);
    const json& i = impacts[k];
    c.impacts.push_back(CongestionImpact{
        in.get<std::string>(i, ip, "congestor"), in.get<std::string>(i, ip, "metric"),
        in.get<double>(i, ip, "isolated"), in.get<double>(i, ip, "congested"),
        in.number_or_nan(i, ip, "impact"), in.get<double>(i, ip, "max_impact"),
        in.get<bool>(i, ip, "tail"), in.get<bool>(i, ip, "pass")});
  }
  const json& loads = in.at(j, p, "loads");
  for (std::size_t k = 0; k < loads.size(); ++k) {
    const std::string lp = fmt::format("{}.loads[{}]", p, k);
    const json& l = loads[k];
    c.loads.push_back(CongestionLoad{
        in.get<std::string>(l, lp, "congestor"), in.get<std::uint64_t>(l, lp, "rounds"),
        in.get<double>(l, lp, "seconds"), in.get<double>(l, lp, "received_gbps")});
  }
  return c;
}

}  // namespace ibscope::results
