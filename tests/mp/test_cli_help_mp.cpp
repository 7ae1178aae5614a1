// Every subcommand's --help, as a user meets it: exit 0, examples and the exit status; and the
// man page `ibscope help-man` generates from the same CLI: every subcommand, its flags, the
// exit status section, and roff that groff renders without a warning.

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "results_json.hpp"

using namespace ibscope::test;

namespace {

// The names under "Subcommands:" in `ibscope --help` (aliases follow a name after a comma).
std::vector<std::string> listed_subcommands() {
  const auto r = run_cli({"--help"});
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> names;
  std::istringstream in(r.out);
  bool in_list = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (line.empty()) break;
    if (line.size() > 2 && line.rfind("  ", 0) == 0 && line[2] != ' ') {
      std::string name = line.substr(2, line.find_first_of(" ,", 2) - 2);
      names.push_back(name);
    }
  }
  return names;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("every subcommand's --help has examples and the exit status", "[mp][cli][help]") {
  const auto names = listed_subcommands();
  INFO("listed: " << names.size());
  for (const char* expected :
       {"run", "allreduce", "reduce_scatter", "allgather", "broadcast", "p2p", "validate",
        "algorithms", "topo", "probe", "accept", "fit", "predict", "model", "compare", "history",
        "export-prometheus", "baseline"}) {
    INFO(expected);
    CHECK(contains(names, expected));
  }
  CHECK_FALSE(contains(names, "help-man"));  // hidden
  for (const auto& name : names) {
    const auto r = run_cli({name, "--help"});
    INFO(name << "\n" << describe(r));
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Examples:\n") != std::string::npos);
    CHECK(r.out.find("\nExit status: ") != std::string::npos);
  }
}

TEST_CASE("help-man: the man page names every subcommand and flag", "[mp][cli][help]") {
  const auto names = listed_subcommands();
  const auto r = run_cli({"help-man"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  const std::string& page = r.out;
  CHECK(page.find(".TH IBSCOPE 1 ") != std::string::npos);
  for (const auto& name : names) {
    INFO(name);
    std::string roff_name;
    for (const char c : name) roff_name += c == '-' ? std::string("\\-") : std::string(1, c);
    CHECK(page.find("\n.SS " + roff_name + "\n") != std::string::npos);
    CHECK(page.find(".TP\n\\fBibscope " + roff_name + "\\fR\n") != std::string::npos);  // exit
  }
  CHECK(page.find("\\fB\\-\\-expect\\-gbps\\fR \\fIFLOAT\\fR") != std::string::npos);
  CHECK(page.find("\\fB\\-\\-prometheus\\-file\\fR \\fIFILE\\fR") != std::string::npos);
  CHECK(page.find(".SH EXIT STATUS\n0 success, 1 ") != std::string::npos);
  CHECK(page.find(".SS help\\-man") == std::string::npos);  // hidden

  SECTION("-o writes the same page, and groff renders it without warnings") {
    const std::string dir = make_temp_dir();
    const std::string file = dir + "/ibscope.1";
    const auto w = run_cli({"help-man", "-o", file});
    INFO(describe(w));
    REQUIRE(w.exit_code == 0);
    std::ifstream in(file);
    std::stringstream written;
    written << in.rdbuf();
    CHECK(written.str() == page);
    if (!std::filesystem::exists("/usr/bin/groff")) {
      WARN("groff is not installed: the roff was not rendered");
      return;
    }
    const auto g = run_process({{"-man", "-Tutf8", "-ww", "-z", file}, {}, 30, "/usr/bin/groff"});
    INFO(describe(g));
    CHECK(g.exit_code == 0);
    CHECK(g.err.empty());
    // -P-cbou: plain text, no overstrike for bold and italics.
    const auto text = run_process({{"-man", "-Tutf8", "-P-cbou", file}, {}, 30, "/usr/bin/groff"});
    CHECK(text.out.find("EXIT STATUS") != std::string::npos);
    CHECK(text.out.find("prometheus") != std::string::npos);
  }
}
