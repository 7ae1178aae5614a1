#include "ibscope/output/loopback_table.hpp"

#include <fmt/format.h>

#include <set>
#include <string>

namespace ibscope::output {

namespace {

std::string gbyte_s_cell(double v) { return v > 0 ? fmt::format("{:.3f}", v) : std::string("-"); }

}  // namespace

void print_loopback_table(std::FILE* out, const std::vector<accept::LoopbackVerdict>& verdicts) {
  if (verdicts.empty()) {
    fmt::print(out, "# loopback: no NIC with an ACTIVE port on any host\n");
    std::fflush(out);
    return;
  }
  fmt::print(out, "# {:<16} {:<10} {:<8} {:>13} {:>12} {:>12} {:>16} {:>13} {:>7}\n", "host",
             "nic:port", "memory", "write_GB/s", "read_GB/s", "read_lat_us", "siblings_wr_GB/s",
             "pcie_GB/s", "verdict");
  for (const auto& v : verdicts) {
    const auto& f = v.figures;
    fmt::print(out, "  {:<16} {:<10} {:<8} {:>13} {:>12} {:>12} {:>16} {:>13} {:>7}\n", f.host,
               fmt::format("{}:{}", f.nic, f.port), f.memory, gbyte_s_cell(f.write_gbyte_s),
               gbyte_s_cell(f.read_gbyte_s),
               f.read_lat_us > 0 ? fmt::format("{:.1f}", f.read_lat_us) : std::string("-"),
               v.siblings > 0 ? gbyte_s_cell(v.siblings_write_gbyte_s) : std::string("-"),
               gbyte_s_cell(topo::route_gbyte_s(f.route)), v.pass ? "pass" : "FAIL");
  }
  for (const auto& v : verdicts) {
    for (const auto& line : v.failures) fmt::print(out, "#   FAIL {}: {}\n", v.figures.host, line);
  }
  // A note that every NIC shares (virtual devices) is printed once.
  std::set<std::string> seen;
  for (const auto& v : verdicts) {
    for (const auto& note : v.notes) {
      if (seen.insert(note).second) fmt::print(out, "#   note: {}\n", note);
    }
  }
  std::fflush(out);
}

}  // namespace ibscope::output
