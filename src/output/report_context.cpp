// The report's context: what was measured where (hosts, NICs, line rates, versions, warnings),
// and the expected line rates drawn on bandwidth charts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "ibscope/core/hosts.hpp"
#include "ibscope/model/results_fits.hpp"
#include "report_sections.hpp"

namespace ibscope::output::report {
namespace {

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "-" : out;
}

// At most kHostsNamed names, then how many in all: a 1,344-host job's list would fill the page.
constexpr std::size_t kHostsNamed = 8;

std::string some_hosts(const std::vector<std::string>& hosts) {
  if (hosts.size() <= kHostsNamed) return join(hosts);
  std::vector<std::string> first(hosts.begin(), hosts.begin() + kHostsNamed - 1);
  return fmt::format("{}, ..., {}", join(first), hosts.back());
}

std::string runs_table(const std::vector<ReportFile>& files) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : files) {
    const results::Document& d = f.doc;
    const std::vector<std::string> hosts = distinct_hosts(d.job.hosts);
    rows.push_back({f.label, f.path, or_dash(d.command.subcommand), or_dash(d.started_utc),
                    d.complete ? "yes" : "no", std::to_string(d.job.ranks),
                    fmt::format("{}: {}", hosts.size(), some_hosts(hosts)),
                    or_dash(d.job.bootstrap), d.environment.ucx_version.value_or("-"),
                    d.environment.ibverbs_version.value_or("-"), or_dash(d.environment.build),
                    model::file_transport_label(d), or_dash(d.tool.version),
                    or_dash(d.tool.git_sha)});
  }
  return table(
      {"label", "file", "command", "started (UTC)", "complete", "ranks", "hosts", "bootstrap",
       "UCX version", "libibverbs", "build", "UCX transports", "ibscope", "git sha"},
      rows);
}

// Rows equal but for the host (column 1) become one row naming the hosts, when there are more
// than kHostsNamed hosts: a 1,344-host job has a few distinct NIC ports, not 10,752. The PCI bus
// id (the note) stays in the key: a NIC in another slot is a row of its own.
std::vector<std::vector<std::string>> group_by_hosts(std::vector<std::vector<std::string>> rows) {
  std::set<std::string> hosts;
  for (const auto& r : rows) hosts.insert(r[1]);
  if (hosts.size() <= kHostsNamed) return rows;
  std::map<std::vector<std::string>, std::vector<std::string>> groups;  // key: row without host
  std::vector<std::vector<std::string>> order;
  for (auto& r : rows) {
    std::vector<std::string> key = r;
    key.erase(key.begin() + 1);
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(std::move(r[1]));
  }
  std::vector<std::vector<std::string>> out;
  for (auto& key : order) {
    const auto& names = groups[key];
    key.insert(key.begin() + 1, names.size() == 1
                                    ? names.front()
                                    : fmt::format("{} hosts: {}", names.size(), some_hosts(names)));
    out.push_back(std::move(key));
  }
  return out;
}

std::string nics_table(const std::vector<ReportFile>& files) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : files) {
    if (f.doc.topology) {
      for (const auto& h : *f.doc.topology) {
        if (h.nics.empty()) {
          rows.push_back({f.label, h.host, "-", "-", "-", "-", "-", "-", "-",
                          h.rdma_available ? "" : h.rdma_reason});
        }
        for (const auto& n : h.nics) {
          if (n.ports.empty())
            rows.push_back({f.label, h.host, n.name, "-", "-", "-", "-", "-", "-", n.error});
          for (const auto& p : n.ports) {
            rows.push_back({f.label, h.host, n.name, std::to_string(p.port), p.state, p.link_layer,
                            fmt::format("{}x {}", p.lanes, p.speed),
                            fmt::format("{:g}", p.line_rate_gbit_s),
                            fmt::format("{:.4g}", p.data_rate_gbyte_s()),
                            n.is_virtual ? "virtual" : n.pci_bus_id});
          }
        }
      }
    }
    if (f.doc.environment.verbs_ports) {
      for (const auto& p : *f.doc.environment.verbs_ports) {
        rows.push_back({f.label, fmt::format("rank {}", p.rank), or_dash(p.device), "-", "-",
                        or_dash(p.link_layer), "-", "-",
                        fmt::format("{:.4g}", p.data_rate_gbit / 8),
                        fmt::format("verbs GID {}", p.gid)});
      }
    }
  }
  if (rows.empty()) return "";
  rows = group_by_hosts(std::move(rows));
  return table({"label", "host", "device", "port", "state", "link layer", "width x speed",
                "line rate (Gb/s)", "data rate (GB/s)", "note"},
               rows);
}

std::string acceptance_table(const std::vector<ReportFile>& files) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : files) {
    if (!f.doc.acceptance) continue;
    const results::Acceptance& a = *f.doc.acceptance;
    int failed = 0;
    for (const auto& l : a.links) failed += l.pass ? 0 : 1;
    rows.push_back({f.label, a.pass ? "PASS" : "FAIL", results::name_of(a.transport),
                    fmt::format("{:g}", a.expect_line_gbit), std::to_string(a.links.size()),
                    std::to_string(failed), fmt::format("{:.4g}", a.median_gbps),
                    fmt::format("{:.4g}", a.median_latency_us)});
  }
  if (rows.empty()) return "";
  return table({"label", "acceptance", "transport", "expected line rate (Gb/s)", "links",
                "failed links", "median link (GB/s)", "median latency (us)"},
               rows);
}

std::string warnings_list(const std::vector<ReportFile>& files) {
  std::string out;
  for (const auto& f : files) {
    for (const auto& w : f.doc.warnings) {
      out +=
          fmt::format("<li class=\"warning\">{}{}</li>",
                      xml_escape(files.size() > 1 ? f.label + ": " : std::string()), xml_escape(w));
    }
    if (f.doc.error) {
      out += fmt::format("<li class=\"fail\">{}: run failed: {}</li>", xml_escape(f.label),
                         xml_escape(f.doc.error->message));
    }
  }
  return out.empty() ? "<p>No warnings.</p>" : "<ul class=\"warnings\">" + out + "</ul>";
}

void add_rate(std::vector<ReferenceLine>& out, double gbyte_s, std::string label) {
  if (!(gbyte_s > 0) || !std::isfinite(gbyte_s)) return;
  for (const auto& r : out) {
    if (std::fabs(r.y - gbyte_s) <= 1e-9 * gbyte_s) return;
  }
  out.push_back({std::move(label), gbyte_s});
}

}  // namespace

std::vector<ReferenceLine> line_rates(const std::vector<ReportFile>& files,
                                      const std::optional<double>& given_gbit) {
  std::vector<ReferenceLine> out;
  if (given_gbit) {
    add_rate(
        out, *given_gbit / 8,
        fmt::format("line rate {:g} Gb/s = {:.4g} GB/s (given)", *given_gbit, *given_gbit / 8));
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    const results::Document& d = files[i].doc;
    const std::string who = files.size() > 1 ? " (" + files[i].label + ")" : "";
    if (d.acceptance) {
      const results::Acceptance& a = *d.acceptance;
      double expected = 0;
      for (const auto& l : a.links) {
        if (std::isfinite(l.expected_gbps)) expected = std::max(expected, l.expected_gbps);
      }
      const double line = std::isfinite(a.expect_line_gbit) ? a.expect_line_gbit : 0;
      if (expected > 0) {
        add_rate(out, expected,
                 fmt::format("expected payload {:.4g} GB/s (acceptance{}{})", expected,
                             line > 0 ? fmt::format(", line {:g} Gb/s", line) : "", who));
      } else if (line > 0) {
        add_rate(
            out, line / 8,
            fmt::format("line rate {:g} Gb/s = {:.4g} GB/s (acceptance{})", line, line / 8, who));
      }
    }
    if (d.topology) {
      double best = 0;
      std::string where;
      for (const auto& h : *d.topology) {
        for (const auto& n : h.nics) {
          for (const auto& p : n.ports) {
            if (p.active() && p.data_rate_gbyte_s() > best) {
              best = p.data_rate_gbyte_s();
              where = fmt::format("{} {}:{}", h.host, n.name, p.port);
            }
          }
        }
      }
      add_rate(out, best, fmt::format("port data rate {:.4g} GB/s ({}{})", best, where, who));
    }
    double probe_gbit = 0;
    if (d.probes) {
      for (const auto& r : d.probes->rows) probe_gbit = std::max(probe_gbit, r.line_rate_gbit);
    }
    if (d.environment.verbs_ports) {
      for (const auto& p : *d.environment.verbs_ports) {
        probe_gbit = std::max(probe_gbit, p.data_rate_gbit);
      }
    }
    add_rate(out, probe_gbit / 8,
             fmt::format("verbs port data rate {:g} Gb/s = {:.4g} GB/s{}", probe_gbit,
                         probe_gbit / 8, who));
  }
  return out;
}

Section context_section(const std::vector<ReportFile>& files) {
  Section s{"context", "Context", "", ""};
  s.html = "<h3>Runs</h3>" + runs_table(files);
  const std::string nics = nics_table(files);
  s.html += "<h3>NICs and line rates</h3>";
  s.html += nics.empty() ? paragraph(
                               "No NIC data in these files (written by 'ibscope topo', "
                               "'ibscope accept' and 'ibscope probe').")
                         : nics;
  const std::string accept = acceptance_table(files);
  if (!accept.empty()) s.html += "<h3>Acceptance</h3>" + accept;
  std::string rates;
  for (const auto& r : line_rates(files, std::nullopt))
    rates += "<li>" + xml_escape(r.label) + "</li>";
  s.html += "<h3>Expected rates drawn on bandwidth charts</h3>";
  s.html += rates.empty() ? paragraph("None in the files (give --expect-gbps to draw one).")
                          : "<ul>" + rates + "</ul>";
  const bool some_without = std::any_of(files.begin(), files.end(), [](const ReportFile& f) {
    return !f.doc.environment.ibverbs_version.has_value();
  });
  if (some_without) {
    s.html += paragraph(
        "libibverbs version: '-' in the runs table where a file does not record it (written "
        "before ibscope recorded it, 2026-12-07, or the loaded library's name carried no "
        "version).");
  }
  s.html += "<h3>Warnings</h3>" + warnings_list(files);
  return s;
}

}  // namespace ibscope::output::report
