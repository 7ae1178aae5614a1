#include "ibscope/output/html_report.hpp"

#include <fmt/format.h>

#include <iterator>
#include <vector>

#include "report_sections.hpp"

namespace ibscope::output {
namespace report {

std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<table><thead><tr>";
  for (const auto& h : header) out += fmt::format("<th>{}</th>", xml_escape(h));
  out += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const auto& cell : row) out += fmt::format("<td>{}</td>", xml_escape(cell));
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string paragraph(const std::string& text) {
  return fmt::format("<p>{}</p>", xml_escape(text));
}

std::string figure(const std::string& svg, const std::string& caption) {
  return fmt::format("<figure>{}<figcaption>{}</figcaption></figure>", svg, xml_escape(caption));
}

std::string file_prefix(const std::vector<ReportFile>& files, std::size_t i) {
  return files.size() > 1 ? files[i].label + ": " : std::string();
}

}  // namespace report

namespace {

// Inline only: the page must open from a laptop with no network.
constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1100px; }
h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 1px solid #ccc; margin-top: 32px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
figure { margin: 12px 0 24px; } figcaption { font-size: 12px; color: #555; }
p.note { color: #666; font-style: italic; }
.warning { color: #a60; } .fail { color: #c00; font-weight: bold; }
footer { margin-top: 40px; font-size: 12px; color: #777; }
)";

}  // namespace

std::string html_report(const std::vector<ReportFile>& files, const ReportOptions& options) {
  const auto rates = report::line_rates(files, options.line_rate_gbit);
  // Built before any output so that a malformed file fails the whole page.
  std::vector<report::Section> sections;
  if (options.comparison) {
    sections.push_back(report::comparison_section(files, *options.comparison));
  }
  const report::Section always[] = {
      report::context_section(files),    report::collectives_section(files, rates),
      report::p2p_section(files, rates), report::pairs_section(files),
      report::stragglers_section(files), report::why_section(files),
      report::fits_section(files),       report::training_section(options.training),
  };
  sections.insert(sections.end(), std::begin(always), std::end(always));
  if (report::has_loopback(files)) sections.push_back(report::loopback_section(files));
  if (report::has_patterns(files)) sections.push_back(report::patterns_section(files));
  if (report::has_congestion(files)) sections.push_back(report::congestion_section(files));
  if (!options.watch_logs.empty()) sections.push_back(report::watch_section(options.watch_logs));
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"generator\" content=\"ibscope report\"><title>{0}</title>"
      "<style>{1}</style></head><body><h1>{0}</h1>",
      xml_escape(options.title), kStyle);
  out += "<nav><ul>";
  for (const auto& s : sections) {
    out += fmt::format("<li><a href=\"#{}\">{}</a></li>", s.id, xml_escape(s.heading));
  }
  out += "</ul></nav>";
  for (const auto& s : sections) {
    out += fmt::format("<section id=\"{0}\" data-section=\"{0}\"><h2>{1}</h2>", s.id,
                       xml_escape(s.heading));
    out += s.html.empty() ? fmt::format("<p class=\"note\">{}</p>", xml_escape(s.note)) : s.html;
    out += "</section>\n";
  }
  out += fmt::format(
      "<footer>Made by {} from {} results file(s). Sizes in binary units (KiB = 1024 B); "
      "GB/s = 1e9 B/s; Gb/s = 1e9 bit/s. Method: docs/report.md.</footer></body></html>\n",
      xml_escape(options.command_line.empty() ? "ibscope report" : options.command_line),
      files.size());
  return out;
}

}  // namespace ibscope::output
