// A baseline from results files (results/baseline.hpp): every accept link and collective row
// keyed as docs/baselines.md says, one value per run, summarised by robust statistics.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/results/baseline.hpp"

namespace ibscope::results {
namespace {

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// "mlx5_0" -> "mlx5", "rxe0" -> "rxe": the driver, which names the NIC family.
std::string driver_of(const std::string& device) {
  std::string d = device;
  while (!d.empty() && (std::isdigit(static_cast<unsigned char>(d.back())) != 0)) d.pop_back();
  while (!d.empty() && d.back() == '_') d.pop_back();
  return d.empty() ? device : d;
}

using LinkKey = std::tuple<std::string, std::string, std::string, std::string>;
using RowKey = std::tuple<std::string, std::string, std::string, std::uint64_t, int>;

LinkKey link_key(const AcceptLink& l) {
  if (std::tie(l.host_a, l.nic_a) <= std::tie(l.host_b, l.nic_b)) {
    return {l.host_a, l.host_b, l.nic_a, l.nic_b};
  }
  return {l.host_b, l.host_a, l.nic_b, l.nic_a};
}

}  // namespace

HardwareSignature signature_of(const Document& doc) {
  HardwareSignature s;
  std::set<std::string> nics, speeds, layers, gpus, hosts;
  if (doc.topology) {
    for (const auto& h : *doc.topology) {
      hosts.insert(h.host);
      for (const auto& nic : h.nics) {
        bool active = false;
        for (const auto& p : nic.ports) {
          if (p.state != "ACTIVE") continue;
          active = true;
          if (!p.speed.empty()) speeds.insert(p.speed);
          if (!p.link_layer.empty()) layers.insert(p.link_layer);
          s.link_rate_gbit = std::max(s.link_rate_gbit, p.data_rate_gbit_s);
        }
        if (active) nics.insert(driver_of(nic.name));
      }
      for (const auto& g : h.gpus) gpus.insert(g.name.empty() ? "GPU" : g.name);
    }
  }
  for (const auto& h : doc.job.hosts) hosts.insert(h);
  s.nic_model = joined(nics);
  s.port_speed = joined(speeds);
  s.link_layer = joined(layers);
  s.gpu_model = joined(gpus);
  s.hosts = static_cast<int>(hosts.size());
  if (doc.acceptance) s.transport = name_of(doc.acceptance->transport);
  return s;
}

Baseline build_baseline(const std::vector<std::pair<std::string, Document>>& runs,
                        const BaselineBuildOptions& options) {
  auto listed = [&] {
    std::string out;
    for (const auto& [path, doc] : runs) out += (out.empty() ? "" : ", ") + path;
    return out.empty() ? std::string("none") : out;
  };
  if (runs.size() < options.min_runs) {
    throw UsageError(fmt::format(
        "a baseline needs at least {} runs (--min-runs) and {} given ({}): its median and spread "
        "would say little; measure again or lower --min-runs",
        options.min_runs, runs.size(), listed()));
  }
  Baseline b;
  b.hardware = signature_of(runs.front().second);
  std::map<LinkKey, std::pair<std::vector<double>, std::vector<double>>> links;
  std::map<RowKey, std::pair<std::vector<double>, std::vector<double>>> rows;
  for (const auto& [path, doc] : runs) {
    const HardwareSignature sig = signature_of(doc);
    if (!(sig == b.hardware)) {
      if (!options.allow_mixed) {
        throw UsageError(fmt::format(
            "{} ran on other hardware than {}: {} vs {}; a baseline compares like with like "
            "(--allow-mixed to build one anyway)",
            path, runs.front().first, sig.describe(), b.hardware.describe()));
      }
      b.mixed = true;
    }
    if (!doc.complete) {
      throw UsageError(
          fmt::format("{} is an incomplete run ({}): leave it out of the baseline", path,
                      doc.error ? doc.error->message : std::string("no error recorded")));
    }
    b.runs.push_back(BaselineRun{path, doc.started_utc, doc.command.subcommand, sig});
    if (doc.acceptance) {
      for (const auto& l : doc.acceptance->links) {
        auto& [bw, lat] = links[link_key(l)];
        bw.push_back(l.measured_gbps);
        if (l.latency_us > 0) lat.push_back(l.latency_us);
      }
    }
    for (const auto& r : doc.collectives.rows) {
      auto& [busbw, time] =
          rows[RowKey{std::string(ibscope::name_of(r.collective)), r.algorithm,
                      std::string(ibscope::name_of(r.type)), r.size_bytes, r.ranks}];
      busbw.push_back(r.busbw_gbps);
      time.push_back(r.time_us);
    }
  }
  if (links.empty() && rows.empty()) {
    throw UsageError(fmt::format(
        "the runs hold no accept links and no collective rows: nothing to make a baseline of ({})",
        listed()));
  }
  for (const auto& [key, values] : links) {
    const auto& [a, b_host, nic_a, nic_b] = key;
    b.links.push_back(BaselineLink{a, b_host, nic_a, nic_b, measure::robust_stats(values.first),
                                   measure::robust_stats(values.second)});
  }
  for (const auto& [key, values] : rows) {
    const auto& [collective, algorithm, type, size, ranks] = key;
    b.rows.push_back(BaselineRow{collective, algorithm, type, size, ranks,
                                 measure::robust_stats(values.first),
                                 measure::robust_stats(values.second)});
  }
  return b;
}

}  // namespace ibscope::results
