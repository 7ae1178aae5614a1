#pragma once
/// A simulated fabric for the acceptance pairing modes (pure, deterministic in its seed; no
/// transport): h hosts x L rails, some slow hosts, NICs and links injected, every link's
/// bandwidth drawn with gaussian jitter. simulate() runs a pairing plan (accept/pairing.hpp),
/// the bandwidth verdicts (absolute and relative, as judge_links), retests of the failed links
/// with fresh noise keeping the best attempt, then localize() (accept/localize.hpp), and counts
/// what it found. bench/accept_scale_sim.cpp prints the table; tests/unit/test_accept_scale.cpp
/// asserts it at a smaller scale.

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ibscope/accept/link_verdict.hpp"
#include "ibscope/accept/pairing.hpp"

namespace ibscope::accept {

struct SimFabric {
  int hosts = 1344;
  int rails = 8;
  double expected_gbps = 49.68;    ///< NDR 400 Gb/s, MTU 4096 (accept/expected_rate.hpp)
  double healthy_fraction = 0.98;  ///< a healthy link's mean, of expected
  double jitter = 0.02;            ///< sd of the multiplicative gaussian noise per measurement
  double slow_host_factor = 0.5;   ///< every link of a slow host
  double slow_nic_factor = 0.6;    ///< every link through a slow NIC
  double slow_link_factor = 0.8;   ///< one host pair on one rail
  int slow_hosts = 3, slow_nics = 6, slow_links = 6;
  std::uint64_t fault_seed = 1;  ///< where the faults are
  std::uint64_t noise_seed = 2;  ///< the jitter of every measurement
};

/// The injected faults, on distinct hosts (a slow link's two hosts carry no other fault).
struct SimFaults {
  std::vector<int> hosts;
  std::vector<std::pair<int, int>> nics;         ///< (host, rail)
  std::vector<std::tuple<int, int, int>> links;  ///< (host a < host b, rail)
};

SimFaults draw_faults(const SimFabric& fabric);

struct SimOutcome {
  std::string pairs;  ///< "all", "random:8 seed 7", ...
  int rounds = 0;
  std::size_t measurements = 0;  ///< links measured, retests included
  int hosts_found = 0, nics_found = 0, links_found = 0;
  int links_tested = 0;  ///< injected slow links whose two NICs were paired at all
  int false_hosts = 0, false_nics = 0, false_links = 0;
  int retest_rounds = 0;
};

/// Runs `spec` (its seed `pairs_seed`) over the fabric with `faults`; `retests` as --retests.
SimOutcome simulate(const SimFabric& fabric, const SimFaults& faults, const PairSelection& spec,
                    std::uint64_t pairs_seed, const Thresholds& thresholds, int retests);

}  // namespace ibscope::accept
