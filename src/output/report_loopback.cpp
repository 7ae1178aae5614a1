// The HTML report's loopback section (accept's preflight, probe loopback, run): per NIC and
// memory, the RDMA WRITE and READ rates to itself against its siblings' median and against the
// smaller of its port's data rate and its PCIe path, the path and the verdict.
#include <fmt/format.h>

#include <algorithm>

#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

// The file's loopback figures: its own section (probe loopback, run), else accept's preflight.
const results::Loopback* loopback_of(const results::Document& doc) {
  if (doc.loopback) return &*doc.loopback;
  if (doc.acceptance && doc.acceptance->preflight && doc.acceptance->preflight->loopback) {
    return &*doc.acceptance->preflight->loopback;
  }
  return nullptr;
}

std::string rate(double gbyte_s) { return gbyte_s > 0 ? fmt::format("{:.4g}", gbyte_s) : "-"; }

// "-12.5" % against the siblings' median; "-" without siblings.
std::string vs(double mine, double siblings) {
  return siblings > 0 ? fmt::format("{:+.1f}", 100 * (mine / siblings - 1)) : "-";
}

}  // namespace

bool has_loopback(const std::vector<ReportFile>& files) {
  for (const auto& f : files) {
    const results::Loopback* l = loopback_of(f.doc);
    if (l != nullptr && !l->nics.empty()) return true;
  }
  return false;
}

Section loopback_section(const std::vector<ReportFile>& files) {
  Section s{"loopback", "NIC loopback: RDMA WRITE and READ from each NIC to itself", "", ""};
  for (const auto& f : files) {
    const results::Loopback* l = loopback_of(f.doc);
    if (l == nullptr || l->nics.empty()) continue;
    s.html += paragraph(fmt::format(
        "{}: {} B messages, budget {:g} s per host; a NIC fails {:g} % below its siblings' "
        "median (same host and memory) or below {:g} of its ceiling (the smaller of the port's "
        "data rate and the PCIe path's narrowest link). Rates in GB/s.",
        f.label, l->size_bytes, l->budget_s, l->slow_pct, l->min_fraction));
    std::vector<std::vector<std::string>> rows;
    for (const results::LoopbackNic& n : l->nics) {
      std::string verdict = n.pass ? "PASS" : "FAIL";
      if (!n.error.empty()) verdict += ": " + n.error;
      for (const auto& why : n.failures) verdict += "; " + why;
      for (const auto& why : n.notes) verdict += "; note: " + why;
      rows.push_back({n.host, fmt::format("{}:{}{}", n.nic, n.port, n.virtual_nic ? " (soft)" : ""),
                      n.memory, rate(n.write_gbyte_s), rate(n.read_gbyte_s),
                      vs(n.write_gbyte_s, n.siblings_write_gbyte_s),
                      vs(n.read_gbyte_s, n.siblings_read_gbyte_s), rate(n.data_rate_gbyte_s),
                      rate(n.pcie_gbyte_s),
                      n.ceiling_gbyte_s > 0
                          ? fmt::format("{:.1f}", 100 * std::min(n.write_gbyte_s, n.read_gbyte_s) /
                                                      n.ceiling_gbyte_s)
                          : "-",
                      n.path, verdict});
    }
    s.html += table(
        {"host", "NIC", "memory", "write", "read", "write vs siblings (%)", "read vs siblings (%)",
         "port data rate", "PCIe", "slower of write and read / ceiling (%)", "path", "verdict"},
        rows);
  }
  return s;
}

}  // namespace ibscope::output::report
