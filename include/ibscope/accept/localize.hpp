#pragma once
/// Which host, NIC or link is slow, from the verdicts of the links measured in every round
/// (pure; unit-tested; the simulation bench/accept_scale_sim.cpp runs it at 1,344 hosts).
///
/// A NIC is (host, local index): the rank with local index i uses rail i. From the links that
/// failed after retests (accept/link_verdict.hpp judge_links):
///   slow NIC:  it met at least `min_partners` distinct hosts and every link through it failed
///              (its partners' other links passed, so the fault is on its side);
///   slow host: every NIC of the host that was measured is slow (slow with all partners on all
///              rails); its NICs are then not listed one by one;
///   slow link: a failed link with no slow NIC or host at either end (slow with this partner,
///              fine with the others).
/// What it cannot tell: a NIC that met fewer than `min_partners` hosts (random:1; a job of two
/// hosts) is never named, its failed links are listed as links naming both ends; a healthy NIC
/// whose every partner was slow is named too (with random:K at most K partners, unlikely).

#include <cstddef>
#include <utility>
#include <vector>

namespace ibscope::accept {

/// One measured link between two NICs; hosts and NICs as indices.
struct RailLink {
  int host_a = 0, nic_a = 0;
  int host_b = 0, nic_b = 0;
  bool failed = false;  ///< its verdict after retests
};

struct SlowNic {
  int host = 0, nic = 0;
  int links = 0;     ///< links through it (every one failed)
  int partners = 0;  ///< distinct hosts it met
};

struct Localisation {
  std::vector<int> slow_hosts;          ///< ascending
  std::vector<SlowNic> slow_nics;       ///< by (host, nic); none of a slow host
  std::vector<std::size_t> slow_links;  ///< indices into the input, ascending
};

Localisation localize(const std::vector<RailLink>& links, int min_partners = 2);

}  // namespace ibscope::accept
