#include "ibscope/cli/man_page.hpp"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <memory>

#include "ibscope/build_info.hpp"
#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/core/atomic_file.hpp"

namespace ibscope::cli {
namespace {

constexpr std::string_view kExitStatus = "Exit status:";

// A footer is examples (and notes), then the "Exit status:" paragraph that ends it.
struct FooterParts {
  std::string examples;
  std::string exit_status;  // one line, without the "Exit status:" prefix
};

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \n");
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(" \n") - first + 1));
}

FooterParts split_footer(const std::string& footer) {
  const auto at = footer.find(kExitStatus);
  if (at == std::string::npos) return {trim(footer), ""};
  std::string exit_status = trim(std::string_view(footer).substr(at + kExitStatus.size()));
  for (char& c : exit_status) {
    if (c == '\n') c = ' ';
  }
  return {trim(std::string_view(footer).substr(0, at)), exit_status};
}

// Filled text: a blank line starts a new paragraph.
void paragraphs(std::string& out, std::string_view text) {
  bool pending_break = false, any = false;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string line = trim(text.substr(start, end - start));
    start = end + 1;
    if (line.empty()) {
      pending_break = any;
      continue;
    }
    if (pending_break) out += ".PP\n";
    out += roff_escape(line) + "\n";
    pending_break = false;
    any = true;
  }
}

// Text printed as is, line by line (examples); a blank line as .sp.
void verbatim(std::string& out, std::string_view text) {
  if (text.empty()) return;
  out += ".PP\n.nf\n";
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    out += trim(line).empty() ? ".sp" : roff_escape(line);
    out += '\n';
    start = end + 1;
  }
  out += ".fi\n";
}

bool hidden(const CLI::App* sub) { return sub->get_group().empty(); }

// CLI11 gives a subcommand its parent's footer unless it sets its own.
std::string own_footer(const CLI::App& app, const CLI::App& sub) {
  return sub.get_footer() == app.get_footer() ? "" : sub.get_footer();
}

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  // Option groups are nameless subcommands to CLI11; their options show under their owner.
  return app.get_subcommands(
      [](const CLI::App* s) { return !s->get_name().empty() && !hidden(s); });
}

// "-d,--ib-dev" -> "\fB\-d\fR, \fB\-\-ib\-dev\fR"; a positional in italics.
std::string option_names(const CLI::Option* opt) {
  if (opt->get_positional()) return fmt::format("\\fI{}\\fR", roff_escape(opt->get_name(true)));
  std::string out;
  const std::string names = opt->get_name(false, true);
  std::size_t start = 0;
  while (start < names.size()) {
    auto end = names.find(',', start);
    if (end == std::string::npos) end = names.size();
    out += fmt::format("{}\\fB{}\\fR", out.empty() ? "" : ", ",
                       roff_escape(names.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

void options(std::string& out, const CLI::App& app, bool with_help) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    if (!with_help && (opt == app.get_help_ptr() || opt == app.get_help_all_ptr())) continue;
    out += ".TP\n" + option_names(opt);
    std::string desc = opt->get_description();
    if (opt->get_type_size() != 0) {
      std::string type =
          !opt->get_option_text().empty() ? opt->get_option_text() : opt->get_type_name();
      // CLI11 appends a check's description: "INT:INT in [1 - 4096]" -> "INT in [1 - 4096]".
      const auto colon = type.find(':');
      if (colon != std::string::npos && type.compare(colon + 1, colon, type, 0, colon) == 0) {
        type.erase(0, colon + 1);
      }
      if (!type.empty()) out += fmt::format(" \\fI{}\\fR", roff_escape(trim(type)));
      if (opt->get_expected_max() > 1) out += " ...";
      if (!opt->get_default_str().empty()) {
        desc += fmt::format(" (default: {})", opt->get_default_str());
      }
      if (opt->get_required()) desc += " (required)";
    }
    out += "\n" + roff_escape(desc) + "\n";
  }
}

std::string usage(const std::string& program, const CLI::App& sub) {
  std::string out = fmt::format("\\fB{} {}\\fR [\\fIoptions\\fR]", roff_escape(program),
                                roff_escape(sub.get_name()));
  for (const CLI::Option* opt : sub.get_options()) {
    if (!opt->get_positional() || opt->get_group().empty()) continue;
    out += fmt::format(" {}{}", option_names(opt), opt->get_expected_max() > 1 ? " ..." : "");
  }
  return out;
}

}  // namespace

std::string roff_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    switch (c) {
      case '\\':
        out += "\\e";
        break;
      case '-':
        out += "\\-";
        break;
      default:
        out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string man_page(const CLI::App& app, std::string_view version) {
  // CLI11 names the app after argv[0] once it parsed a command line.
  std::string program = std::filesystem::path(app.get_name()).filename().string();
  if (program.empty()) program = "ibscope";
  std::string upper = program;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));

  const std::string description = app.get_description();
  std::string summary = description.substr(0, description.find('\n'));
  if (summary.starts_with(program + ": ")) summary.erase(0, program.size() + 2);
  if (summary.ends_with('.')) summary.pop_back();

  std::string out = fmt::format(
      ".\\\" Generated by '{} help-man' from the CLI's own help text; do not edit.\n"
      ".TH {} 1 \"\" \"{} {}\" \"User Commands\"\n"
      ".SH NAME\n{} \\- {}\n"
      ".SH SYNOPSIS\n.nf\n"
      "\\fB{}\\fR \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]\n"
      "\\fB{}\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR\n"
      "\\fB{}\\fR \\fB\\-\\-version\\fR\n.fi\n"
      ".SH DESCRIPTION\n",
      roff_escape(program), roff_escape(upper), roff_escape(program), roff_escape(version),
      roff_escape(program), roff_escape(summary), roff_escape(program), roff_escape(program),
      roff_escape(program));
  paragraphs(out, description);
  out += ".SH OPTIONS\n";
  options(out, app, /*with_help=*/true);

  out += ".SH COMMANDS\n";
  for (const CLI::App* sub : visible_subcommands(app)) {
    out += fmt::format(".SS {}\n", roff_escape(sub->get_name()));
    out += usage(program, *sub) + "\n.PP\n";
    paragraphs(out, sub->get_description());
    if (!sub->get_aliases().empty()) {
      std::string aliases;
      for (const auto& a : sub->get_aliases()) aliases += (aliases.empty() ? "" : ", ") + a;
      out += ".PP\nAlso: " + roff_escape(aliases) + "\n";
    }
    options(out, *sub, /*with_help=*/false);
    verbatim(out, split_footer(own_footer(app, *sub)).examples);
  }

  const FooterParts top = split_footer(app.get_footer());
  if (!top.examples.empty()) {
    out += ".SH EXAMPLES\n";
    verbatim(out, top.examples);
  }
  out += ".SH EXIT STATUS\n";
  if (!top.exit_status.empty()) out += roff_escape(top.exit_status) + "\n";
  for (const CLI::App* sub : visible_subcommands(app)) {
    const FooterParts parts = split_footer(own_footer(app, *sub));
    if (parts.exit_status.empty()) continue;
    out += fmt::format(".TP\n\\fB{} {}\\fR\n{}\n", roff_escape(program),
                       roff_escape(sub->get_name()), roff_escape(parts.exit_status));
  }
  out += fmt::format(
      ".SH SEE ALSO\n"
      ".BR srun (1),\n.BR mpirun (1),\n.BR ib_write_bw (1),\n.BR ibstat (8)\n"
      ".PP\n"
      "The documentation installed with {}, in share/doc/{}: README.md, docs/acceptance.md, "
      "docs/methodology.md, docs/model.md, and results/README.md (the results file).\n",
      roff_escape(program), roff_escape(program));
  return out;
}

Command add_man_command(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("help-man", "Print the man page (roff) of every command");
  sub->group("");  // hidden: the man page and --help leave it out
  sub->add_option("-o,--output", *out, "Write it to FILE, replacing it atomically")
      ->type_name("FILE");
  const CLI::App* root = &app;
  return {sub, [root, out]() -> int {
            const std::string page = man_page(*root, build::kVersion);
            if (out->empty()) {
              fmt::print("{}", page);
            } else {
              write_file_replacing(*out, page);
            }
            return 0;
          }};
}

}  // namespace ibscope::cli
