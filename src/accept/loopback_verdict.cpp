#include "ibscope/accept/loopback_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ibscope::accept {

double percent_below(double value, double reference) noexcept {
  if (reference <= 0 || value >= reference) return 0;
  return (reference - value) / reference * 100;
}

namespace {

bool measured(const probes::LoopbackFigures& f) { return f.error.empty(); }

bool same_group(const probes::LoopbackFigures& a, const probes::LoopbackFigures& b) {
  return a.host == b.host && a.memory == b.memory;
}

std::string memory_suffix(const probes::LoopbackFigures& f) {
  return f.memory == "host" ? std::string() : fmt::format(" into {}", f.memory);
}

void judge_against_siblings(const probes::LoopbackFigures& f, std::string_view verb, double value,
                            double median, int siblings, const LoopbackThresholds& t,
                            LoopbackVerdict& v) {
  if (median <= 0) return;
  const double below = percent_below(value, median);
  if (value < (1 - t.slow_pct / 100) * median) {
    v.failures.push_back(fmt::format(
        "{} loopback {}{} {:.3g} GB/s, {:.0f} % below its {} sibling{}' median {:.3g} GB/s "
        "(fails at {:g} % below); path: {}",
        f.nic, verb, memory_suffix(f), value, below, siblings, siblings == 1 ? "" : "s", median,
        t.slow_pct, topo::describe_route(f.route)));
  }
}

void judge_against_ceiling(const probes::LoopbackFigures& f, std::string_view verb, double value,
                           const LoopbackThresholds& t, LoopbackVerdict& v) {
  if (v.ceiling_gbyte_s <= 0 || value >= t.min_fraction * v.ceiling_gbyte_s) return;
  v.failures.push_back(fmt::format(
      "{} loopback {}{} {:.3g} GB/s, {:.0f} % of its ceiling {:.3g} GB/s (fails below {:g} %; "
      "the smaller of its port's data rate {:.3g} GB/s and its PCIe route's {:.3g} GB/s); "
      "path: {}",
      f.nic, verb, memory_suffix(f), value, value / v.ceiling_gbyte_s * 100, v.ceiling_gbyte_s,
      t.min_fraction * 100, f.data_rate_gbyte_s, topo::route_gbyte_s(f.route),
      topo::describe_route(f.route)));
}

}  // namespace

std::vector<LoopbackVerdict> judge_loopback(std::span<const probes::LoopbackFigures> figures,
                                            const LoopbackThresholds& t) {
  std::vector<LoopbackVerdict> out;
  out.reserve(figures.size());
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const probes::LoopbackFigures& f = figures[i];
    LoopbackVerdict v;
    v.figures = f;
    if (!measured(f)) {
      v.pass = false;
      v.failures.push_back(
          fmt::format("{} loopback{} not measured: {}", f.nic, memory_suffix(f), f.error));
      out.push_back(std::move(v));
      continue;
    }
    std::vector<double> writes, reads;
    for (std::size_t j = 0; j < figures.size(); ++j) {
      if (j == i || !measured(figures[j]) || !same_group(f, figures[j])) continue;
      writes.push_back(figures[j].write_gbyte_s);
      reads.push_back(figures[j].read_gbyte_s);
    }
    v.siblings = static_cast<int>(writes.size());
    v.siblings_write_gbyte_s = median_of(writes);
    v.siblings_read_gbyte_s = median_of(reads);
    if (v.siblings == 0) {
      v.notes.push_back(
          fmt::format("{} is the only NIC measured on {}{}: judged against its "
                      "port's data rate and PCIe route only",
                      f.nic, f.host, memory_suffix(f)));
    }
    judge_against_siblings(f, "write", f.write_gbyte_s, v.siblings_write_gbyte_s, v.siblings, t, v);
    judge_against_siblings(f, "read", f.read_gbyte_s, v.siblings_read_gbyte_s, v.siblings, t, v);
    if (f.virtual_nic) {
      v.notes.push_back(
          fmt::format("{} is a virtual device: its port rate is nominal and it has "
                      "no PCIe link of its own; not judged against a ceiling",
                      f.nic));
    } else {
      const double pcie = topo::route_gbyte_s(f.route);
      double ceiling = f.data_rate_gbyte_s;
      if (pcie > 0 && (ceiling <= 0 || pcie < ceiling)) ceiling = pcie;
      v.ceiling_gbyte_s = ceiling;
      if (ceiling <= 0) {
        v.notes.push_back(
            fmt::format("{}: neither its port's data rate nor its PCIe route's rate "
                        "is known; not judged against a ceiling",
                        f.nic));
      }
      judge_against_ceiling(f, "write", f.write_gbyte_s, t, v);
      judge_against_ceiling(f, "read", f.read_gbyte_s, t, v);
    }
    v.pass = v.failures.empty();
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace ibscope::accept
