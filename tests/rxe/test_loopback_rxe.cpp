// Loopback of each NIC (probes/loopback.hpp, accept/loopback_phase.hpp) on real verbs devices:
// every rxe device writes to and reads from itself and gives a rate; one device made slow by the
// IBSCOPE_FAULT_SLOW_NIC hook (a sleep in the completion loop, below the real verbs code) fails
// its preflight, named with its path, while its siblings pass (inside `accept`; `probe loopback`
// runs the same phase, accept/loopback_phase.hpp). About 72 s of the rxe suite (24 s + 48 s).
// Soft-RoCE under TCG: rates are emulation-bound and noisy; only ratios are asserted.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mp/process.hpp"
#include "rxe_env.hpp"

namespace rxe = ibscope::test::rxe;
using ibscope::test::ProcessResult;
using ibscope::test::run_process;
using nlohmann::json;

namespace {

std::string loopback_describe(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") +
         "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

ProcessResult loopback_run(std::vector<std::string> args, std::map<std::string, std::string> env) {
  ibscope::test::ProcessSpec spec;
  spec.args = std::move(args);
  spec.env = std::move(env);
  spec.limit_s = 300;
  return run_process(spec);
}

// 64 KiB messages: a signalled completion every 16 messages (1 MiB) comes often enough under
// TCG for the slow-NIC hook's sleep to throttle the stream.
const std::vector<std::string> kLoopbackArgs = {
    "--loopback-budget", "4s",   "--timeout", "120",
    "--format",          "json", "--out",     "/tmp/ibscope-rxe-loopback"};

std::vector<std::string> probe_loopback_args() {
  std::vector<std::string> args = {"probe", "loopback", "-s", "64K"};
  args.insert(args.end(), kLoopbackArgs.begin(), kLoopbackArgs.end());
  return args;
}

const json* nic_entry(const json& nics, const std::string& name) {
  for (const auto& n : nics) {
    if (n["nic"] == name) return &n;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("probe loopback runs on every rxe device and gives a rate", "[rxe][loopback]") {
  rxe::require_guest();
  std::vector<std::string> args = probe_loopback_args();
  // Noise between devices under TCG is not what this case tests: only a far outlier fails.
  args.insert(args.end(), {"--loopback-slow-pct", "90"});
  const ProcessResult r = loopback_run(args, {});
  INFO(loopback_describe(r));
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc.contains("loopback"));
  const json& lb = doc["loopback"];
  CHECK(lb["ran"] == true);
  const auto devices = rxe::devices();
  REQUIRE(lb["nics"].size() == devices.size());
  for (const auto& dev : devices) {
    const json* n = nic_entry(lb["nics"], dev);
    REQUIRE(n != nullptr);
    INFO(n->dump(1));
    CHECK((*n)["memory"] == "host");
    CHECK((*n)["virtual_nic"] == true);
    CHECK((*n)["error"] == "");
    CHECK((*n)["write_gbyte_s"].get<double>() > 0);
    CHECK((*n)["read_gbyte_s"].get<double>() > 0);
    CHECK((*n)["read_lat_us"].get<double>() > 0);
    CHECK((*n)["iterations"].get<int>() >= 16);
    CHECK((*n)["siblings"] == static_cast<int>(devices.size()) - 1);
    CHECK((*n)["pass"] == true);
    CHECK((*n)["path"].get<std::string>().find("no PCIe path") != std::string::npos);
  }
}

TEST_CASE("a NIC slowed by the fault hook fails loopback, named with its path", "[rxe][loopback]") {
  rxe::require_guest();
  const auto devices = rxe::devices();
  const std::string slow = devices.at(2);
  // Healthy rxe devices differed by up to 10x from one another under TCG on a loaded host
  // (reads 2.8 to 27.7 MB/s at 64 KiB); a 300 ms sleep per completion poll left the slowed one
  // only 64 % below its siblings, 2 s 91 to 94 % (0.47 MB/s): the 85 % threshold leaves the
  // healthy ones 6.7x of noise. (4 s made the slowed NIC's loopback outlast the 60 s that the
  // other rank waits for the figures: docs/acceptance.md.)
  const std::map<std::string, std::string> env = {{"IBSCOPE_FAULT_SLOW_NIC", slow + ":2000000"}};

  SECTION("accept's preflight") {
    std::vector<std::string> args = {"accept",
                                     "--np",
                                     "2",
                                     "--transport",
                                     "verbs",
                                     "-d",
                                     devices.at(0),
                                     "--skip-allreduce",
                                     "--verbs-lat-iters",
                                     "20",
                                     "--verbs-bw-iters",
                                     "50",
                                     "--bw-size",
                                     "16K",
                                     "--retests",
                                     "0",
                                     "--loopback-slow-pct",
                                     "85",
                                     "--loopback-size",
                                     "64K"};
    args.insert(args.end(), kLoopbackArgs.begin(), kLoopbackArgs.end());
    const ProcessResult r = loopback_run(args, env);
    INFO(loopback_describe(r));
    REQUIRE(r.exit_code == 1);
    const auto brace = r.out.find('{');
    REQUIRE(brace != std::string::npos);
    const json doc = json::parse(r.out.substr(brace));
    const json& pre = doc["acceptance"]["preflight"];
    CHECK(pre["pass"] == false);
    REQUIRE(pre.contains("loopback"));
    for (const auto& dev : devices) {
      const json* n = nic_entry(pre["loopback"]["nics"], dev);
      REQUIRE(n != nullptr);
      INFO(n->dump(1));
      CHECK((*n)["pass"] == (dev != slow));
    }
    bool named = false;
    for (const auto& f : pre["findings"]) {
      const std::string message = f["message"].get<std::string>();
      if (f["device"] == slow + ":1" && f["fatal"] == true &&
          message.find(slow + " loopback write") == 0 &&
          message.find("below its 3 siblings' median") != std::string::npos &&
          message.find("path: NUMA 0, no PCIe path (virtual device " + slow) != std::string::npos) {
        named = true;
      }
    }
    CHECK(named);
    // The verdict's summary (stderr with --format json) names it among the failures.
    CHECK(r.err.find("FAIL preflight: ") != std::string::npos);
    CHECK(r.err.find(slow + ":1: " + slow + " loopback write") != std::string::npos);
    // The hook is announced as every hook is.
    CHECK(r.err.find("FAULT HOOK IBSCOPE_FAULT_SLOW_NIC=" + slow) != std::string::npos);
  }
}
