// `ibscope probe` against real verbs devices: every test over one rxe device (rxe's loopback
// path) and across the veth between rxe0 and rxe1, sweeps, all pairs of four ranks, and the
// failure paths that need a real device: port down, a locked-memory limit too low, and a
// remote access error from a wrong rkey.

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mp/process.hpp"
#include "rxe_env.hpp"

namespace rxe = ibscope::test::rxe;
using ibscope::test::ProcessResult;
using ibscope::test::run_process;
using nlohmann::json;

namespace {

std::string describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") +
         "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

ProcessResult ibscope_run(std::vector<std::string> args, std::string binary = {}) {
  ibscope::test::ProcessSpec spec;
  spec.args = std::move(args);
  spec.limit_s = 150;
  if (!binary.empty()) spec.binary = std::move(binary);
  return run_process(spec);
}

/// Runs a probe with --format json and returns the document printed on stdout.
json probe_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"probe"};
  args.insert(args.end(), extra.begin(), extra.end());
  for (const char* a :
       {"--format", "json", "--out", "/tmp/ibscope-rxe-results", "--timeout", "60"}) {
    args.emplace_back(a);
  }
  const ProcessResult r = ibscope_run(args);
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

void check_rows(const json& doc, const std::string& test, std::size_t rows, int iterations) {
  REQUIRE(doc["complete"] == true);
  REQUIRE(doc.contains("probes"));
  const auto& all = doc["probes"]["rows"];
  INFO(all.dump(1).substr(0, 2000));
  REQUIRE(all.size() == rows);
  for (const auto& row : all) {
    CHECK(row["test"] == test);
    CHECK(row["iterations"] == iterations);
    CHECK(row["mtu_bytes"].get<int>() >= 256);
    if (test.ends_with("_lat")) {
      CHECK(row["samples_us"].size() == static_cast<std::size_t>(iterations));
      CHECK(row["time_us"]["min"].get<double>() > 0);
      CHECK(row["time_us"]["p50"].get<double>() >= row["time_us"]["min"].get<double>());
      CHECK(row["time_us"]["p99_9"].get<double>() <= row["time_us"]["max"].get<double>());
    } else {
      CHECK(row["bw_gbps"].get<double>() > 0);
      CHECK(row["peak_bw_gbps"].get<double>() >= row["bw_gbps"].get<double>() * 0.999);
      CHECK(row["msg_rate_mps"].get<double>() > 0);
    }
  }
}

void wait_port_state(const std::string& device, const std::string& state) {
  const std::string path = "/sys/class/infiniband/" + device + "/ports/1/state";
  for (int i = 0; i < 100; ++i) {
    std::ifstream in(path);
    std::string text;
    std::getline(in, text);
    if (text.find(state) != std::string::npos) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("port 1 of " << device << " never became " << state);
}

}  // namespace

TEST_CASE("every probe runs over one rxe device", "[rxe][probe]") {
  rxe::require_guest();
  const std::string dev = rxe::devices()[0];
  for (const char* test : {"write_bw", "read_bw", "send_bw", "write_lat", "read_lat", "send_lat"}) {
    SECTION(test) {
      const bool bw = std::string(test).ends_with("_bw");
      const json doc = probe_json(
          {test, "--np", "2", "-d", dev, "-s", bw ? "16K" : "64", "-n", bw ? "200" : "100"});
      check_rows(doc, test, 1, bw ? 200 : 100);
      const auto& row = doc["probes"]["rows"][0];
      CHECK(row["device_a"] == dev + ":1");
      CHECK(row["gid_index_a"] == rxe::gid_index());
      CHECK(row["line_rate_gbit"].get<double>() > 0);
      REQUIRE(doc["environment"]["verbs_ports"].size() == 2);
    }
  }
}

TEST_CASE("probes cross the veth between two rxe devices", "[rxe][probe]") {
  rxe::require_guest();
  const std::string devs = rxe::devices()[0] + "," + rxe::devices()[1];
  SECTION("write_bw, a sweep, two QPs") {
    const json doc = probe_json({"write_bw", "--np", "2", "-d", devs, "-b", "1K", "-e", "64K", "-f",
                                 "4", "-n", "100", "-q", "2"});
    check_rows(doc, "write_bw", 4, 100);
    CHECK(doc["probes"]["rows"][0]["device_b"] == rxe::devices()[1] + ":1");
    CHECK(doc["probes"]["rows"][0]["qps"] == 2);
  }
  SECTION("send_bw both ways") {
    const json doc =
        probe_json({"send_bw", "--np", "2", "-d", devs, "-s", "8K", "-n", "200", "-B"});
    check_rows(doc, "send_bw", 1, 200);
    CHECK(doc["probes"]["rows"][0]["bidirectional"] == true);
  }
  SECTION("write_lat with the MTU and inline size asked for") {
    const json doc = probe_json(
        {"write_lat", "--np", "2", "-d", devs, "-s", "2", "-n", "100", "-m", "512", "-I", "64"});
    check_rows(doc, "write_lat", 1, 100);
    CHECK(doc["probes"]["rows"][0]["mtu_bytes"] == 512);
  }
}

TEST_CASE("all pairs of four ranks run in three rounds and print a matrix", "[rxe][probe]") {
  rxe::require_guest();
  const std::string devs = rxe::devices()[0] + "," + rxe::devices()[1];
  std::vector<std::string> args = {
      "probe", "write_bw", "--np", "4",       "-d",  devs,    "-s",
      "4K",    "-n",       "50",   "--pairs", "all", "--out", "/tmp/ibscope-rxe-results"};
  const ProcessResult r = ibscope_run(args);
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("rank x rank"));
  for (const char* pair : {"0->1", "2->3", "0->2", "1->3", "0->3", "1->2"}) {
    CHECK_THAT(r.out, Catch::Contains(pair));
  }
}

TEST_CASE("a port that is down gives one line naming it", "[rxe][probe][failure]") {
  rxe::require_guest();
  const std::string dev = rxe::devices()[1];
  const std::string netdev = rxe::netdevs()[1];
  REQUIRE(std::system(("ip link set " + netdev + " down").c_str()) == 0);
  wait_port_state(dev, "DOWN");
  const ProcessResult r = ibscope_run({"probe", "write_bw", "--np", "2", "-d", dev, "-n", "10",
                                       "--timeout", "20", "--out", "/tmp/ibscope-rxe-results"});
  REQUIRE(std::system(("ip link set " + netdev + " up").c_str()) == 0);
  wait_port_state(dev, "ACTIVE");
  INFO(describe(r));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("port 1 of " + dev + " is DOWN") &&
                        Catch::Contains("ip link set <interface> up"));
}

TEST_CASE("a locked-memory limit too low gives the remedy", "[rxe][probe][failure]") {
  rxe::require_guest();
  const std::string setpriv = rxe::find_in_path("setpriv");
  const std::string prlimit = rxe::find_in_path("prlimit");
  REQUIRE_FALSE(setpriv.empty());
  REQUIRE_FALSE(prlimit.empty());
  // Root may lock any amount (CAP_IPC_LOCK): drop the capability, then cap RLIMIT_MEMLOCK.
  ibscope::test::ProcessSpec spec;
  spec.binary = prlimit;
  spec.args = {"--memlock=65536",
               setpriv,
               "--inh-caps=-ipc_lock",
               "--bounding-set=-ipc_lock",
               IBSCOPE_BINARY,
               "probe",
               "write_bw",
               "--np",
               "2",
               "-d",
               rxe::devices()[0],
               "-s",
               "4M",
               "-n",
               "10",
               "--timeout",
               "20",
               "--out",
               "/tmp/ibscope-rxe-results"};
  spec.limit_s = 120;
  const ProcessResult r = run_process(spec);
  INFO(describe(r));
  // Refused before any buffer is registered (core/memory_budget): the host's limit, exit 1.
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("probe write_bw up to 4 MiB") &&
                        Catch::Contains("registers 8 MiB per rank with the NIC") &&
                        Catch::Contains("RLIMIT_MEMLOCK is 64 KiB") &&
                        Catch::Contains("ulimit -l unlimited"));
}

TEST_CASE("a GID index the port does not have is a usage error listing the table",
          "[rxe][probe][failure]") {
  rxe::require_guest();
  const ProcessResult r =
      ibscope_run({"probe", "write_lat", "--np", "2", "-d", rxe::devices()[0], "-x", "77",
                   "--timeout", "20", "--out", "/tmp/ibscope-rxe-results"});
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("-x 77") && Catch::Contains("RoCE v2"));
}
