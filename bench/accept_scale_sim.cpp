// Acceptance at 1,000+ hosts, simulated (no transport): 1,344 hosts x 8 rails by default, a few
// slow hosts, NICs and links injected, gaussian jitter on every measurement; each pairing mode
// runs its rounds, the verdicts, the retests and the localisation (accept/scale_sim.hpp), and one
// row per mode says what it found and what it named wrongly, summed over --trials (each trial
// with other faults, noise and pairs). Deterministic: the same flags print the same table.
//
//   build/release/bench/accept_scale_sim [--hosts 1344] [--rails 8] [--jitter 0.02]
//                                        [--trials 3] [--modes all,log,random:2,...]

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/accept/scale_sim.hpp"

namespace {

using ibscope::accept::SimFabric;
using ibscope::accept::SimOutcome;
using ibscope::measure::PairSelection;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    out.push_back(
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

[[noreturn]] void usage(std::string_view why) {
  fmt::print(stderr,
             "accept_scale_sim: {}\nusage: accept_scale_sim [--hosts N] [--rails N] [--jitter SD] "
             "[--trials N] [--modes all,log,random:K,...]\n",
             why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  SimFabric fabric;
  int trials = 3;
  std::string modes = "all,log,random:2,random:4,random:8,random:16";
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", flag));
    const char* value = argv[++i];
    if (flag == "--hosts") {
      fabric.hosts = std::atoi(value);
    } else if (flag == "--rails") {
      fabric.rails = std::atoi(value);
    } else if (flag == "--jitter") {
      fabric.jitter = std::atof(value);
    } else if (flag == "--trials") {
      trials = std::atoi(value);
    } else if (flag == "--modes") {
      modes = value;
    } else {
      usage(fmt::format("unknown flag {}", flag));
    }
  }
  if (fabric.hosts < 16 || fabric.rails < 1 || trials < 1 || !(fabric.jitter >= 0)) {
    usage("--hosts >= 16, --rails >= 1, --trials >= 1, --jitter >= 0");
  }
  const ibscope::accept::Thresholds thresholds;  // accept's defaults
  const int retests = 2;
  fmt::print(
      "# {} hosts x {} rails ({} ranks), {} trial(s); per trial {} slow hosts (x{}), {} slow "
      "NICs (x{}), {} slow links (x{}); healthy links {:.0f} % of {:.2f} GB/s expected, jitter "
      "sd {:.1f} %; thresholds: {:.0f} % of expected, median - {:g} x max(1.4826 MAD, {:.0f} %), "
      "{} retests\n",
      fabric.hosts, fabric.rails, fabric.hosts * fabric.rails, trials, fabric.slow_hosts,
      fabric.slow_host_factor, fabric.slow_nics, fabric.slow_nic_factor, fabric.slow_links,
      fabric.slow_link_factor, 100 * fabric.healthy_fraction, fabric.expected_gbps,
      100 * fabric.jitter, 100 * thresholds.min_fraction, thresholds.mad_k,
      100 * thresholds.mad_floor_fraction, retests);
  fmt::print(
      "| pairs | rounds | retest rounds | links measured | slow hosts found | slow NICs found "
      "| slow links measured | slow links found | false hosts | false NICs | false links "
      "| sim time (s) |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& mode : split(modes)) {
    const PairSelection spec =
        ibscope::measure::parse_pair_selection(mode, ibscope::measure::PairsSyntax::kHostModes);
    SimOutcome sum;
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < trials; ++t) {
      SimFabric f = fabric;
      f.fault_seed = 1000 + static_cast<std::uint64_t>(t);
      f.noise_seed = 2000 + static_cast<std::uint64_t>(t);
      const auto faults = ibscope::accept::draw_faults(f);
      const SimOutcome o = ibscope::accept::simulate(
          f, faults, spec, 3000 + static_cast<std::uint64_t>(t), thresholds, retests);
      sum.rounds = o.rounds;  // the same every trial
      sum.retest_rounds += o.retest_rounds;
      sum.measurements += o.measurements;
      sum.hosts_found += o.hosts_found;
      sum.nics_found += o.nics_found;
      sum.links_tested += o.links_tested;
      sum.links_found += o.links_found;
      sum.false_hosts += o.false_hosts;
      sum.false_nics += o.false_nics;
      sum.false_links += o.false_links;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("| {} | {} | {} | {} | {}/{} | {}/{} | {}/{} | {}/{} | {} | {} | {} | {:.1f} |\n",
               mode, sum.rounds, sum.retest_rounds, sum.measurements, sum.hosts_found,
               trials * fabric.slow_hosts, sum.nics_found, trials * fabric.slow_nics,
               sum.links_tested, trials * fabric.slow_links, sum.links_found,
               trials * fabric.slow_links, sum.false_hosts, sum.false_nics, sum.false_links,
               seconds);
    std::fflush(stdout);
  }
  return 0;
}
