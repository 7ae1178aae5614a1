// `ibscope watch` as a user runs it, real processes: wrapping a command that makes TCP traffic
// on loopback (perl sending itself 10 MiB), the command's exit status, the JSONL
// log (every line valid JSON, the ticks on the 100 ms grid), the Prometheus textfile (every line
// parses), the summary naming the NICs, the log in `ibscope report`; a command that fails, one that
// is missing, a log that exists, --duration without a command, and SIGTERM forwarded to the
// command.

#include <signal.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "results_json.hpp"

using namespace ibscope::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> watch_file_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Every line a HELP/TYPE comment or `name{labels} value` (text format 0.0.4).
void check_watch_exposition(const std::string& path) {
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [0-9eE.+-]+$)");
  int samples = 0;
  for (const auto& line : watch_file_lines(path)) {
    INFO(line);
    if (line.rfind("# HELP ibscope_", 0) == 0 || line.rfind("# TYPE ibscope_", 0) == 0) continue;
    CHECK(std::regex_match(line, sample));
    ++samples;
  }
  CHECK(samples > 5);
}

// Sends 10 MiB to itself over loopback TCP, sleeps 1 s, exits 3.
constexpr const char* kWatchTcpTraffic = R"(
use IO::Socket::INET;
my $l = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0) or die;
my $port = $l->sockport;
if (!fork) {
  my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port) or die;
  print $c "x" x 65536 for 1 .. 160;
  exit 0;
}
my $s = $l->accept;
while (sysread($s, my $b, 65536)) {}
wait;
sleep 1;
exit 3;
)";

// The interfaces the reader watches on a host without RDMA: all but loopback.
std::vector<std::string> watched_interfaces() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator("/sys/class/net")) {
    if (e.path().filename() != "lo" && fs::exists(e.path() / "statistics/rx_bytes")) {
      names.push_back(e.path().filename());
    }
  }
  return names;
}

}  // namespace

TEST_CASE(
    "watch -- CMD: the command's status, a JSONL line per interval, the textfile, the "
    "summary",
    "[mp][watch]") {
  const std::string dir = make_temp_dir();
  const std::string log = dir + "/watch.jsonl";
  const std::string prom_dir = dir + "/textfile";
  fs::create_directories(prom_dir);
  // 10 MiB through a loopback TCP connection (perl-base is Essential in Debian), then 1 s more.
  REQUIRE(fs::exists("/usr/bin/perl"));
  const auto r = run_process({{"watch", "--interval", "100ms", "--log", log, "--prom-dir", prom_dir,
                               "--", "/usr/bin/perl", "-e", kWatchTcpTraffic},
                              {},
                              60});
  INFO(describe(r));
  CHECK(r.exit_code == 3);

  const auto lines = watch_file_lines(log);
  CHECK(lines.size() >= 8);
  std::uint64_t tcp_segments = 0;
  std::vector<double> phases_s;
  for (const auto& line : lines) {
    INFO(line);
    nlohmann::json j;
    REQUIRE_NOTHROW(j = nlohmann::json::parse(line));
    CHECK(j.at("interval_s").get<double>() > 0);
    CHECK(j.at("interval_s").get<double>() < 1);
    const double elapsed = j.at("elapsed_s").get<double>();
    phases_s.push_back(std::fabs(elapsed - 0.1 * std::round(elapsed / 0.1)));
    for (const auto& nic : j.at("nics")) {
      if (nic.at("nic") != "tcp") continue;
      for (const auto& c : nic.at("counters")) {
        if (c.at("name") == "OutSegs") tcp_segments += c.at("delta").get<std::uint64_t>();
      }
    }
  }
  CHECK(tcp_segments > 100);  // 10 MiB on loopback: at least 160 writes of 64 KiB
  // Scheduled on steady_clock ticks, not "sleep 100 ms after each reading": no drift.
  std::sort(phases_s.begin(), phases_s.end());
  REQUIRE_FALSE(phases_s.empty());
  CHECK(phases_s[phases_s.size() / 2] < 0.02);

  const std::string prom = prom_dir + "/ibscope_watch.prom";
  REQUIRE(fs::exists(prom));
  check_watch_exposition(prom);
  std::ifstream in(prom);
  std::stringstream text;
  text << in.rdbuf();
  CHECK_THAT(text.str(), Catch::Contains("# TYPE ibscope_nic_counter_total counter"));
  CHECK_THAT(text.str(), Catch::Contains("counter=\"OutSegs\",kind=\"traffic\"}"));
  for (const auto& e : fs::directory_iterator(prom_dir)) {
    CHECK(e.path().filename() == "ibscope_watch.prom");  // no temp file left behind
  }

  CHECK_THAT(r.out, Catch::Contains("moved(MB)"));
  CHECK_THAT(r.out, Catch::Contains("\n  tcp "));
  for (const auto& name : watched_interfaces()) {
    CHECK_THAT(r.out, Catch::Contains("  " + name + " "));
  }

  // The log renders in the HTML report: per-NIC rates over time.
  const auto rep = run_cli({"report", log, "-o", dir + "/watch.html"});
  INFO(describe(rep));
  CHECK(rep.exit_code == 0);
  std::ifstream page_in(dir + "/watch.html");
  std::stringstream page;
  page << page_in.rdbuf();
  CHECK_THAT(page.str(), Catch::Contains("data-chart=\"watch-rate-0\""));
}

TEST_CASE("watch -- CMD: a failing command's status, a missing one is 127", "[mp][watch]") {
  const auto failed = run_cli({"watch", "--interval", "100ms", "--", "false"}, 30);
  INFO(describe(failed));
  CHECK(failed.exit_code == 1);
  CHECK_THAT(failed.out, Catch::Contains("moved(MB)"));

  const std::string log = make_temp_dir() + "/missing.jsonl";
  const auto missing =
      run_cli({"watch", "--log", log, "--", "/nonexistent/ibscope-no-such-command", "--flag"}, 30);
  INFO(describe(missing));
  CHECK(missing.exit_code == 127);
  CHECK_THAT(missing.err,
             Catch::Contains("cannot run '/nonexistent/ibscope-no-such-command': No such file"));
  CHECK_FALSE(fs::exists(log));  // no line in it: not left behind

  const auto killed = run_cli({"watch", "--", "/bin/sh", "-c", "kill -9 $$"}, 30);
  CHECK(killed.exit_code == 137);
}

TEST_CASE("watch: --duration without a command, a log that exists is refused", "[mp][watch]") {
  const std::string dir = make_temp_dir();
  const std::string log = dir + "/node.jsonl";
  const auto r = run_cli({"watch", "--interval", "100ms", "--duration", "0.5s", "--log", log}, 30);
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  const auto lines = watch_file_lines(log);
  CHECK(lines.size() >= 3);  // 5, less a tick a loaded machine made it miss
  CHECK(lines.size() <= 6);
  CHECK_THAT(r.out, Catch::Contains("findings"));

  const auto again = run_cli({"watch", "--duration", "0.2s", "--log", log}, 30);
  INFO(describe(again));
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.err, Catch::Contains("--append"));
  CHECK(watch_file_lines(log).size() == lines.size());

  const auto appended =
      run_cli({"watch", "--interval", "100ms", "--duration", "0.3s", "--log", log, "--append"}, 30);
  CHECK(appended.exit_code == 0);
  CHECK(watch_file_lines(log).size() > lines.size());

  CHECK(run_cli({"watch", "--interval", "1ms"}, 30).exit_code == 2);
  CHECK(run_cli({"watch", "--prom-dir", dir + "/none"}, 30).exit_code == 2);
  CHECK(run_cli({"watch", "--duration", "1s", "--", "true"}, 30).exit_code == 2);
}

TEST_CASE("watch -- CMD: SIGTERM is forwarded to the command", "[mp][watch]") {
  Running job = start_process({{"watch", "--interval", "100ms", "--", "sleep", "30"}, {}, 30});
  // The command runs once the watch has a child.
  for (int i = 0; i < 100 && children_of(job.pid).empty(); ++i) ::usleep(50'000);
  ::usleep(200'000);
  ::kill(job.pid, SIGTERM);
  const auto r = wait_process(job);
  INFO(describe(r));
  CHECK(r.exit_code == 143);  // sleep's death by SIGTERM, as the watch's own status
  CHECK(r.elapsed_s < 20);
  CHECK_THAT(r.err, Catch::Contains("SIGTERM forwarded"));
  CHECK_THAT(r.out, Catch::Contains("moved(MB)"));
}

TEST_CASE("watch --help: listed, with examples and the exit status", "[mp][watch][help]") {
  const auto main_help = run_cli({"--help"});
  CHECK_THAT(main_help.out, Catch::Contains("\n  watch "));
  const auto r = run_cli({"watch", "--help"});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("Examples:\n"));
  CHECK_THAT(r.out, Catch::Contains("\nExit status: with a command, the command's"));
  CHECK_THAT(r.out, Catch::Contains("--imbalance-pct"));
}
