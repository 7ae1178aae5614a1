// Resource limits as a user meets them: sizes the host cannot hold are refused, on every rank
// and before any buffer exists, with MemAvailable and the remedy; exit 2, nothing measured,
// no OOM kill. The sizes are worked out from this host's own MemAvailable.

#include <catch2/catch.hpp>
#include <cctype>
#include <fstream>
#include <sstream>

#include "ibscope/core/memory_budget.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

std::uint64_t mem_available_bytes() {
  return ibscope::read_host_memory().available_bytes.value_or(0);
}

/// `fraction` of MemAvailable, in whole MiB, as a size argument.
std::string mib_of(std::uint64_t available, double fraction) {
  return std::to_string(static_cast<std::uint64_t>(static_cast<double>(available) * fraction) >>
                        20) +
         "M";
}

void check_refused(const ProcessResult& r) {
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("MemAvailable") && Catch::Contains("2 ranks x") &&
                        Catch::Contains("available") && Catch::Contains("fewer ranks per host"));
  // Nothing was measured: the banner and the table header only, no row.
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    CHECK_FALSE(std::isdigit(static_cast<unsigned char>(line[first])));
  }
}

}  // namespace

TEST_CASE("an all-reduce sweep larger than the host's memory is a usage error", "[mp][limits]") {
  const std::uint64_t available = mem_available_bytes();
  REQUIRE(available > 0);
  // 2 ranks x 3 buffers x available/4 = 1.5 x MemAvailable; -e stops at 64 GiB.
  if (available / 4 > (64ULL << 30)) {
    WARN("MemAvailable is above 256 GiB: no -e within the flag's limit overflows it");
    return;
  }
  const auto e = mib_of(available, 0.25);
  const ProcessResult r = run_process({{"allreduce", "--np", "2", "-b", e, "-e", e, "-n", "1", "-w",
                                        "0", "--timeout", "30", "--out", "/tmp/ibscope-mp-results"},
                                       {},
                                       60});
  check_refused(r);
  CHECK_THAT(r.err, Catch::Contains("allreduce sweep up to") && Catch::Contains("-e/--maxbytes"));
}

TEST_CASE("a p2p sweep larger than the host's memory is a usage error", "[mp][limits]") {
  const std::uint64_t available = mem_available_bytes();
  REQUIRE(available > 0);
  // 2 ranks x 2 buffers x available/3; p2p -e stops at 16 GiB.
  if (available / 3 > (16ULL << 30)) {
    WARN("MemAvailable is above 48 GiB: no p2p -e within the flag's limit overflows it");
    return;
  }
  const auto e = mib_of(available, 1.0 / 3);
  const ProcessResult r = run_process({{"p2p", "--np", "2", "-b", e, "-e", e, "--tests", "bw",
                                        "--timeout", "30", "--out", "/tmp/ibscope-mp-results"},
                                       {},
                                       60});
  check_refused(r);
  CHECK_THAT(r.err, Catch::Contains("p2p up to") && Catch::Contains("p2p -e/--maxbytes"));
}

TEST_CASE("a soak larger than the host's memory is a usage error", "[mp][limits]") {
  const std::uint64_t available = mem_available_bytes();
  REQUIRE(available > 0);
  if (available / 4 > (64ULL << 30)) {
    WARN("MemAvailable is above 256 GiB");
    return;
  }
  const ProcessResult r =
      run_process({{"soak", "--np", "2", "--sizes", mib_of(available, 0.25), "--duration", "20s",
                    "--window", "5s", "--timeout", "30", "--out", "/tmp/ibscope-mp-results"},
                   {},
                   60});
  check_refused(r);
  CHECK_THAT(r.err, Catch::Contains("--sizes"));
}
