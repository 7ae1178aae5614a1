#include "ibscope/accept/localize.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace ibscope::accept {
namespace {

struct NicTally {
  int links = 0, failed = 0;
  std::vector<int> partners;  // sorted and made unique before use
};

}  // namespace

Localisation localize(const std::vector<RailLink>& links, int min_partners) {
  std::map<std::pair<int, int>, NicTally> nics;
  for (const RailLink& l : links) {
    for (const auto& [host, nic, other] :
         {std::tuple{l.host_a, l.nic_a, l.host_b}, std::tuple{l.host_b, l.nic_b, l.host_a}}) {
      NicTally& t = nics[{host, nic}];
      ++t.links;
      if (l.failed) ++t.failed;
      t.partners.push_back(other);
    }
  }
  for (auto& [key, t] : nics) {
    std::sort(t.partners.begin(), t.partners.end());
    t.partners.erase(std::unique(t.partners.begin(), t.partners.end()), t.partners.end());
  }
  auto nic_slow = [&](const NicTally& t) {
    return static_cast<int>(t.partners.size()) >= min_partners && t.failed == t.links;
  };
  // A host is slow when every NIC of it that was measured is slow.
  std::map<int, bool> host_slow;
  for (const auto& [key, t] : nics) {
    auto [it, inserted] = host_slow.emplace(key.first, true);
    it->second = it->second && nic_slow(t);
  }
  Localisation out;
  for (const auto& [host, slow] : host_slow) {
    if (slow) out.slow_hosts.push_back(host);
  }
  for (const auto& [key, t] : nics) {
    if (!nic_slow(t) || host_slow[key.first]) continue;
    out.slow_nics.push_back(
        SlowNic{key.first, key.second, t.links, static_cast<int>(t.partners.size())});
  }
  for (std::size_t i = 0; i < links.size(); ++i) {
    const RailLink& l = links[i];
    if (!l.failed) continue;
    const bool explained =
        nic_slow(nics[{l.host_a, l.nic_a}]) || nic_slow(nics[{l.host_b, l.nic_b}]);
    if (!explained) out.slow_links.push_back(i);
  }
  return out;
}

}  // namespace ibscope::accept
