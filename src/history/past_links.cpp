#include "ibscope/history/past_links.hpp"

#include <map>
#include <set>
#include <tuple>

namespace ibscope::history {

PastLinks past_links(Database& db, const std::string& since_utc) {
  Statement s = db.prepare(
      "SELECT l.run, l.host_a, l.nic_a, l.host_b, l.nic_b, l.measured_gbps, l.latency_us FROM "
      "links l JOIN runs r ON r.id = l.run WHERE r.complete = 1 AND r.started_utc >= ?1 "
      "ORDER BY r.started_utc, l.rowid");
  s.bind(1, since_utc);
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, PastLink> links;
  std::set<std::int64_t> runs;
  while (s.step()) {
    runs.insert(s.column_int(0));
    std::string host_a = s.column_text(1), nic_a = s.column_text(2);
    std::string host_b = s.column_text(3), nic_b = s.column_text(4);
    if (std::tie(host_b, nic_b) < std::tie(host_a, nic_a)) {
      std::swap(host_a, host_b);
      std::swap(nic_a, nic_b);
    }
    PastLink& l = links[Key{host_a, nic_a, host_b, nic_b}];
    if (l.bw_gbps.empty() && l.latency_us.empty()) {
      l.host_a = host_a;
      l.nic_a = nic_a;
      l.host_b = host_b;
      l.nic_b = nic_b;
    }
    l.bw_gbps.push_back(s.column_double(5));
    if (!s.column_is_null(6) && s.column_double(6) > 0) l.latency_us.push_back(s.column_double(6));
  }
  PastLinks out;
  out.runs = runs.size();
  for (auto& [key, l] : links) out.links.push_back(std::move(l));
  return out;
}

}  // namespace ibscope::history
