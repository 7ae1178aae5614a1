// ibscope's UCX jobs over real RDMA: two emulated hosts in the Soft-RoCE guest
// (emulated_hosts.sh: own hostname, IPC namespace and boot id each, so UCX cannot use shared
// memory between them), with no UCX variable set by the test. UCX must carry the collectives
// over rc_verbs on each rank's own rail, verified (#wrong 0), and the results must say which
// NIC every rank used (docs/ucx-transports.md).

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "emulated_hosts.hpp"
#include "mp/process.hpp"
#include "rxe_env.hpp"

namespace rxe = ibscope::test::rxe;
using ibscope::test::ProcessResult;
using ibscope::test::ProcessSpec;
using ibscope::test::run_process;
using nlohmann::json;
using rxe::check_rdma_job;
using rxe::collect_ranks;
using rxe::hosts_spec;
using rxe::HostsRun;
using rxe::run_hosts;
using rxe::slurp;

TEST_CASE("UCX between two emulated hosts: every collective over rc_verbs, verified",
          "[rxe][ucx]") {
  rxe::require_guest();
  const std::vector<std::string> sweep = {"-b", "8",  "-e", "256K",      "-f", "8",        "-n",
                                          "2",  "-w", "1",  "--timeout", "60", "--format", "json"};
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"allreduce", "-A", "all"},
        {"reduce_scatter"},
        {"allgather"},
        {"broadcast", "--root", "1"},
        {"alltoall", "-A", "all"},
        {"alltoallv", "-A", "all", "--counts", "zipf:1"}}) {
    std::vector<std::string> args = command;
    args.insert(args.end(), sweep.begin(), sweep.end());
    INFO(command[0]);
    const json doc = check_rdma_job(run_hosts(2, 1, args), 2);
    CHECK(doc["collectives"]["rows"].size() >= 4);
    for (const auto& rail : doc["environment"]["rails"]) {
      // One rank per host: local rank 0 takes the first ACTIVE NIC on both hosts.
      CHECK(rail["nic"] == rxe::devices()[0] + ":1");
      CHECK(rail["lane_nics"] == json::array({rxe::devices()[0] + ":1"}));
      CHECK(rail["numa_node"] == 0);
    }
  }
  const json p2p = check_rdma_job(
      run_hosts(2, 1,
                {"p2p", "-b", "8", "-e", "64K", "-f", "16", "-n", "20", "--bw-iters", "3", "-w",
                 "2", "--window", "4", "--timeout", "60", "--format", "json"}),
      2);
  CHECK(p2p["p2p"]["rows"].size() >= 3);
}

TEST_CASE("Rails: with two NICs, local rank i uses NIC i on both hosts, and the lanes prove it",
          "[rxe][ucx]") {
  rxe::require_guest();
  const HostsRun r = run_hosts(2, 2,
                               {"allreduce", "-b", "8", "-e", "64K", "-f", "64", "-n", "2", "-w",
                                "1", "--timeout", "60", "--format", "json"});
  const json doc = check_rdma_job(r, 4);
  for (const auto& rail : doc["environment"]["rails"]) {
    const int local = rail["rank"].get<int>() % 2;
    const std::string nic = rxe::devices()[static_cast<std::size_t>(local)] + ":1";
    INFO(rail.dump());
    CHECK(rail["host"] == "g" + std::to_string(rail["rank"].get<int>() / 2));
    CHECK(rail["nic"] == nic);
    CHECK(rail["netdev"] == rxe::netdevs()[static_cast<std::size_t>(local)]);
    CHECK(rail["lane_nics"] == json::array({nic}));
  }
  for (const auto& w : doc["warnings"])
    CHECK(w.get<std::string>().find("besides its rail") == std::string::npos);
}

TEST_CASE(
    "One NIC per host (--nic) puts each host on its own NIC, and the traffic crosses the veth",
    "[rxe][ucx]") {
  rxe::require_guest();
  const auto tx_bytes = [](const std::string& netdev) {
    return std::stoull(slurp("/sys/class/net/" + netdev + "/statistics/tx_bytes"));
  };
  const std::uint64_t a0 = tx_bytes(rxe::netdevs()[0]), b0 = tx_bytes(rxe::netdevs()[1]);
  const HostsRun r = run_hosts(2, 1,
                               {"allreduce", "-b", "1M", "-e", "1M", "-n", "4", "-w", "1",
                                "--timeout", "60", "--format", "json"},
                               "--nic " + rxe::devices()[0] + "|--nic " + rxe::devices()[1]);
  const json doc = check_rdma_job(r, 2);
  CHECK(doc["environment"]["rails"][0]["lane_nics"] == json::array({rxe::devices()[0] + ":1"}));
  CHECK(doc["environment"]["rails"][1]["lane_nics"] == json::array({rxe::devices()[1] + ":1"}));
  // 5 all-reduces of 1 MiB in and out of place: each rank sends >= 5 x 2 x 512 KiB.
  CHECK(tx_bytes(rxe::netdevs()[0]) - a0 >= 5u * 2 * 512 * 1024);
  CHECK(tx_bytes(rxe::netdevs()[1]) - b0 >= 5u * 2 * 512 * 1024);
}

TEST_CASE("accept --transport ucx between two emulated hosts measures every link over rc_verbs",
          "[rxe][ucx]") {
  rxe::require_guest();
  const HostsRun r = run_hosts(
      2, 1,
      {"accept", "--transport", "ucx", "--lat-iters", "50", "--bw-size", "256K", "--bw-iters", "3",
       "--bw-window", "4", "--retests", "0", "--ar-sizes", "64K", "--ar-iters", "3", "--ar-warmup",
       "1", "-A", "ring", "--timeout", "60", "--format", "json",
       // The loopback has tests of its own (test_loopback_rxe.cpp).
       "--no-loopback"});
  INFO(r.describe());
  // Soft-RoCE under TCG is far below any line rate: a FAIL verdict (exit 1) is expected; the
  // test is that every link was measured over rc_verbs, not the verdict.
  REQUIRE((r.rc[0] == 0 || r.rc[0] == 1));
  const json doc = json::parse(r.out[0]);
  CHECK(doc["complete"] == true);
  for (const auto& [pair, lanes] : doc["environment"]["transports"].items()) {
    CHECK(lanes.get<std::string>().find("rc_verbs/") != std::string::npos);
  }
  CHECK(doc["environment"]["ucx_env_set"]["UCX_TLS"] == "^ud_verbs,sm");
  CHECK(doc["acceptance"]["links"].size() == 1);  // one pair
  CHECK(doc["acceptance"]["links"][0]["transports"].get<std::string>().find("rc_verbs/") !=
        std::string::npos);
}

TEST_CASE(
    "Rails: cutting one rail's link fails the ranks on it, naming rank, host and NIC, in time",
    "[rxe][ucx]") {
  rxe::require_guest();
  REQUIRE(rxe::devices().size() >= 4);  // two rails: rxe0-rxe1 and rxe2-rxe3 (two veth pairs)
  const auto& dev = rxe::devices();
  // Host g0 has rxe0 (rail A) and rxe2 (rail B), host g1 rxe1 (A) and rxe3 (B): local rank 0 of
  // each host on rail A, local rank 1 on rail B.
  const std::string host_args =
      "--nic " + dev[0] + "," + dev[2] + "|--nic " + dev[1] + "," + dev[3];
  constexpr double kTimeoutS = 8;
  const std::filesystem::path logs = "/tmp/ibscope-rxe-hosts/cut";
  const ProcessSpec spec = hosts_spec(
      logs, 2, 2,
      {"allreduce", "-b", "64K", "-e", "64K", "-n", "100000", "-w", "2", "--timeout", "8"},
      host_args);
  auto running = ibscope::test::start_process(spec);
  // Cut once rank 0 printed its table header (the timed loop has begun).
  const auto started = std::chrono::steady_clock::now();
  while (slurp(logs / "rank0.out").find("#wrong") == std::string::npos &&
         std::chrono::steady_clock::now() - started < std::chrono::seconds(120)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::string cut = rxe::netdevs()[3];  // rxe3's end of rail B
  REQUIRE(std::system(("ip link set " + cut + " down").c_str()) == 0);
  const auto cut_at = std::chrono::steady_clock::now();
  const ProcessResult script = ibscope::test::wait_process(running);
  const double after_cut_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cut_at).count();
  REQUIRE(std::system(("ip link set " + cut + " up").c_str()) == 0);

  const HostsRun ranks = collect_ranks(script, logs, 4);
  INFO(ranks.describe());
  INFO("the last rank ended " << after_cut_s << " s after the cut");
  for (int rc : ranks.rc) CHECK(rc != 0);  // nobody hangs on
  CHECK(after_cut_s < kTimeoutS + 5);
  // Rail B's ranks (local rank 1: ranks 1 and 3) say that their own NIC went down, with host
  // and NIC. Rail A's ranks either relay the abort of the rank that failed first (naming it,
  // its host and NIC) or time out waiting for a peer themselves; they never blame their own NIC.
  for (int r = 0; r < 4; ++r) {
    const std::string& err = ranks.err[static_cast<std::size_t>(r)];
    const std::string nic = dev[static_cast<std::size_t>(r % 2 == 1 ? 2 + r / 2 : r / 2)] + ":1";
    INFO("rank " << r << " on " << nic);
    CHECK_THAT(err, Catch::Contains("ibscope[rank " + std::to_string(r) + " g" +
                                    std::to_string(r / 2) + "]: error: "));
    CHECK_THAT(err, Catch::Contains("rank " + std::to_string(r) + " (g" + std::to_string(r / 2) +
                                    ", nic " + nic + ")") ||
                        Catch::Contains("(g1, nic " + dev[3] + ":1)") ||
                        Catch::Contains("(g0, nic " + dev[2] + ":1)"));
    if (r % 2 == 1) {
      CHECK_THAT(err, Catch::Contains("its NIC " + nic + " is DOWN"));
    } else {
      CHECK_THAT(err, !Catch::Contains("its NIC " + nic + " is DOWN"));
    }
  }
  // The partial results keep what was measured before the cut.
  CHECK_THAT(ranks.out[0], Catch::Contains("# partial results (incomplete): "));
}

TEST_CASE("ibscope run between two emulated hosts: links, every all-reduce algorithm, the model",
          "[rxe][ucx]") {
  rxe::require_guest();
  const HostsRun r = run_hosts(2, 1, {"run",       "-b",
                                      "8",         "-e",
                                      "256K",      "-f",
                                      "8",         "-n",
                                      "2",         "-w",
                                      "1",         "--p2p-maxbytes",
                                      "64K",       "--p2p-stepfactor",
                                      "16",        "--p2p-iters",
                                      "20",        "--p2p-bw-iters",
                                      "3",         "--p2p-window",
                                      "4",         "--skip-report",
                                      "--timeout", "60",
                                      "--format",  "csv"});
  INFO(r.describe());
  REQUIRE(r.script.exit_code == 0);
  const std::string marker = "# results: ";
  const auto at = r.err[0].find(marker);
  REQUIRE(at != std::string::npos);
  const std::string path =
      r.err[0].substr(at + marker.size(), r.err[0].find('\n', at) - at - marker.size());
  const json doc = json::parse(slurp(path));
  CHECK(doc["complete"] == true);
  CHECK(doc["environment"]["ucx_env_set"]["UCX_TLS"] == "^ud_verbs,sm");
  for (const auto& [pair, lanes] : doc["environment"]["transports"].items()) {
    CHECK(lanes.get<std::string>().find("rc_verbs/") != std::string::npos);
  }
  std::set<std::string> algorithms;
  for (const auto& row : doc["collectives"]["rows"]) {
    algorithms.insert(row["algorithm"].get<std::string>());
    CHECK(row["wrong"] == 0);
  }
  CHECK(algorithms.size() >= 5);  // -A all: ring, tree, dbt, rhd, rd
}

TEST_CASE("A UCX abort (the user lets ud_verbs in) comes after the error line and the results",
          "[rxe][ucx][crash]") {
  rxe::require_guest();
  // UCX 1.13's ud_verbs over rxe: the first collective stalls, and force-closing the endpoints
  // then aborts inside UCX (ucp_request.c "got REQ message"; docs/ucx-transports.md). ibscope
  // says why and writes the results before it closes them.
  const std::filesystem::path logs = "/tmp/ibscope-rxe-hosts/ud-abort";
  const std::string out = "/tmp/ibscope-rxe-results/ud-abort";
  std::filesystem::remove_all(out);
  ProcessSpec spec =
      hosts_spec(logs, 2, 1, {"allreduce", "-b", "8", "-e", "1M", "--timeout", "10"}, "", out);
  spec.env["UCX_TLS"] = "rc_verbs,ud_verbs,tcp,self";
  const HostsRun r = collect_ranks(run_process(spec), logs, 2);
  INFO(r.describe());
  CHECK(r.script.exit_code != 0);
  CHECK_THAT(r.out[0], Catch::Contains("WARNING: UCX_TLS=rc_verbs,ud_verbs,tcp,self lets UCX "
                                       "use ud_verbs on Soft-RoCE device"));
  CHECK_THAT(r.err[0], Catch::Contains("ibscope[rank 0 g0]: error: "));
  CHECK_THAT(r.out[0], Catch::Contains("# partial results (incomplete): "));
  // One file, the results (not only the checkpoint), whatever UCX did afterwards (beside it the
  // run history's ibscope.db, docs/history.md).
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    if (!e.path().filename().string().starts_with("ibscope.db")) files.push_back(e.path());
  }
  REQUIRE(files.size() == 1);
  CHECK(files[0].extension() == ".json");
  const json doc = json::parse(slurp(files[0]));
  CHECK(doc["complete"] == false);
  CHECK(doc["environment"]["ucx_env"]["UCX_TLS"] == "rc_verbs,ud_verbs,tcp,self");
}

TEST_CASE(
    "NIC counters: 2 % loss on rail A's veth fails that link by rxe's counters, rail B's does not",
    "[rxe][counters]") {
  rxe::require_guest();
  // netem on both ends of rail A's veth (rxe0 on rxe-a <-> rxe1 on rxe-b); rail B (rxe2, rxe3)
  // stays clean. Each emulated host's local rank i uses its i-th -d device.
  const auto tc = [](const std::string& args) {
    return run_process({{"-c", "tc qdisc " + args}, {}, 30, rxe::find_in_path("bash")});
  };
  for (const std::string dev : {rxe::netdevs()[0], rxe::netdevs()[1]}) {
    const auto r = tc("replace dev " + dev + " root netem loss 2%");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  }
  // --timeout 40, not more: at the end UCX closes every endpoint with a flush bounded by it, and
  // the endpoints between a rank on rail A and one on rail B never flush here (two subnets with
  // no route between them): the close took 88 of this case's 125 s with --timeout 90. The
  // lossy bandwidth phase waits for rxe's retransmission timers, late under TCG (~10 s with 100
  // messages of 64 KiB, load 8-35); 30 messages still give rail A about 200 sequence errors
  // (300-600 with 100).
  const auto lossy_accept = [] {
    return run_hosts(
        2, 2,
        {"accept", "--transport", "verbs", "--verbs-lat-iters", "50", "--verbs-bw-iters", "30",
         "--bw-size", "64K", "--retests", "0", "--skip-allreduce", "--timeout", "40",
         // rxe under TCG retransmits on a clean veth too (its timers fire
         // late under emulation: 1,700 to 2,100 ppm on rail B here); 2 %
         // loss gave 6,100 to 7,500 ppm on rail A.
         "--max-retransmit-ppm", "4000", "--format", "json", "--no-loopback"},
        "-d " + rxe::devices()[0] + "," + rxe::devices()[2] + "|-d " + rxe::devices()[1] + "," +
            rxe::devices()[3]);
  };
  // Twice in CI on 2026-12-07 (never in 3 runs by hand) the job stopped at the round's results
  // gather ("bootstrap 'probe results, round 0' timed out after 40 s: rank 0 (g0) never
  // arrived", on every rank) and UCX then aborted in its close; the bootstrap's TCP crosses the
  // same lossy veth. Not understood yet; such a job is run once more, and the test still fails
  // if that one stops too.
  HostsRun r = lossy_accept();
  if (r.rc[0] != 0 && r.rc[0] != 1) {
    WARN("the lossy accept stopped (exit " << r.rc[0] << "): run once more\n" << r.describe());
    r = lossy_accept();
  }
  for (const std::string dev : {rxe::netdevs()[0], rxe::netdevs()[1]})
    tc("del dev " + dev + " root");
  INFO(r.describe());
  // Soft-RoCE under TCG is far below any line rate: the verdict is FAIL either way; the test is
  // what each link's counters say.
  REQUIRE((r.rc[0] == 0 || r.rc[0] == 1));
  // UCX may log a wire-up error over the lossy rail on stdout before the document.
  const auto brace = r.out[0].find('{');
  REQUIRE(brace != std::string::npos);
  const json doc = json::parse(r.out[0].substr(brace));
  REQUIRE(doc["acceptance"]["links"].size() == 2);
  // Sequence errors (a packet missing: out_of_seq_request at the responder, rcvd_seq_err at the
  // requester) are what loss adds. rxe under TCG also retransmits on a clean veth when the
  // emulator falls behind (duplicate_request, completer_retry_err: 1,700 ppm at light load,
  // 9,200 ppm with a build beside it on rail B), so rail B's verdict depends on the machine's
  // load and is not checked; its sequence errors are.
  auto sequence_errors = [](const json& link) {
    std::uint64_t n = 0;
    for (const auto& nic : link["nic_counters"]) {
      for (const auto& c : nic["counters"]) {
        if (c["name"] == "out_of_seq_request" || c["name"] == "rcvd_seq_err") {
          n += c["delta"].get<std::uint64_t>();
        }
      }
    }
    return n;
  };
  std::uint64_t seq_a = 0, seq_b = 0;
  for (const auto& link : doc["acceptance"]["links"]) {
    INFO(link.dump());
    const bool rail_a = link["nic_a"].get<std::string>().rfind(rxe::devices()[0], 0) == 0;
    REQUIRE(link.contains("counters"));
    const std::string reason = link["reason"].get<std::string>();
    if (rail_a) {
      seq_a = sequence_errors(link);
      // Failed by the counters, rxe's sequence errors named in the verdict.
      CHECK(link["counter_errors"].get<bool>());
      CHECK((reason.find("out_of_seq_request +") != std::string::npos ||
             reason.find("rcvd_seq_err +") != std::string::npos));
    } else {
      seq_b = sequence_errors(link);
    }
    for (const auto& n : link["nic_counters"]) {
      // Only the link's own ports: rail A's link carries rxe0/rxe1, rail B's rxe2/rxe3.
      const std::string nic = n["nic"].get<std::string>();
      CHECK((nic.rfind(link["nic_a"].get<std::string>(), 0) == 0 ||
             nic.rfind(link["nic_b"].get<std::string>(), 0) == 0));
    }
  }
  // Measured with 100 bandwidth messages: rail A 300 to 600 sequence errors, rail B 0 to 2.
  CHECK(seq_a >= 20);
  CHECK(seq_b * 10 < seq_a);
}

namespace {

/// `s` in single quotes for bash.
std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// `spec` as one bash command line (its environment set in front).
std::string command_line(const ProcessSpec& spec) {
  std::string line;
  for (const auto& [k, v] : spec.env) line += k + "=" + shell_quoted(v) + " ";
  line += shell_quoted(spec.binary);
  for (const auto& a : spec.args) line += " " + shell_quoted(a);
  return line;
}

}  // namespace

TEST_CASE(
    "NIC counters: `ibscope watch` over p2p on both rails sees rail A's loss on its NICs only",
    "[rxe][counters][watch]") {
  rxe::require_guest();
  const auto tc = [](const std::string& args) {
    return run_process({{"-c", "tc qdisc " + args}, {}, 30, rxe::find_in_path("bash")});
  };
  for (const std::string dev : {rxe::netdevs()[0], rxe::netdevs()[1]}) {
    const auto r = tc("replace dev " + dev + " root netem loss 2%");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  }
  // One p2p job per rail (2 emulated hosts x 1 rank), rail A (rxe0 <-> rxe1) then rail B (rxe2
  // <-> rxe3), both under one watch that wraps them.
  // 1 + 3 windows of 64 x 64 KiB per job (12 MiB timed, one way): rail A's 2 % loss still gives
  // hundreds of sequence errors; 2 + 10 windows made this case 217 s of rxe/counters (load 8-13).
  constexpr std::uint64_t kTimedWindows = 3, kWindow = 64, kBytes = 64 * 1024;
  const std::vector<std::string> p2p =
      rxe::words(fmt::format("p2p --tests bw -b 64K -e 64K -w 1 --bw-iters {} --window {} -n 10 "
                             "--timeout 90 --format json",
                             kTimedWindows, kWindow));
  const std::filesystem::path dir = "/tmp/ibscope-rxe-watch";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const ProcessSpec rail_a = hosts_spec(
      dir / "logs-a", 2, 1, p2p, "--nic " + rxe::devices()[0] + "|--nic " + rxe::devices()[1],
      (dir / "results").string());
  const ProcessSpec rail_b = hosts_spec(
      dir / "logs-b", 2, 1, p2p, "--nic " + rxe::devices()[2] + "|--nic " + rxe::devices()[3],
      (dir / "results").string());
  const std::string log = (dir / "watch.jsonl").string();
  ProcessSpec watch;
  watch.args = {"watch", "--interval", "500ms",
                "--log", log,          "--",
                "bash",  "-c",         command_line(rail_a) + " && " + command_line(rail_b)};
  watch.limit_s = 420;
  const ProcessResult w = run_process(watch);
  for (const std::string dev : {rxe::netdevs()[0], rxe::netdevs()[1]})
    tc("del dev " + dev + " root");
  INFO("watch exit " << w.exit_code << "\nstdout:\n" << w.out << "\nstderr:\n" << w.err);
  // The wrapped command's status is the watch's: both p2p jobs completed.
  REQUIRE(w.exit_code == 0);

  // Per device: sequence errors (what loss adds, as in the accept test above) and packets
  // moved (rxe's sent_pkts + rcvd_pkts), summed over the log's intervals.
  std::map<std::string, std::uint64_t> seq, packets;
  std::ifstream in(log);
  int lines = 0;
  for (std::string line; std::getline(in, line);) {
    ++lines;
    const json j = json::parse(line);
    for (const auto& nic : j["nics"]) {
      const std::string name = nic["nic"].get<std::string>();
      for (const auto& dev : rxe::devices()) {
        if (name.rfind(dev, 0) != 0) continue;
        for (const auto& c : nic["counters"]) {
          if (c["name"] == "sent_pkts" || c["name"] == "rcvd_pkts") {
            packets[dev] += c["delta"].get<std::uint64_t>();
          }
          if (c["name"] == "out_of_seq_request" || c["name"] == "rcvd_seq_err") {
            seq[dev] += c["delta"].get<std::uint64_t>();
          }
        }
      }
    }
  }
  REQUIRE(lines >= 2);
  const auto& d = rxe::devices();
  INFO("sequence errors rxe0..3: "
       << seq[d[0]] << " " << seq[d[1]] << " " << seq[d[2]] << " " << seq[d[3]] << "; packets "
       << packets[d[0]] << " " << packets[d[1]] << " " << packets[d[2]] << " " << packets[d[3]]);
  // Both rails carried the jobs' traffic: every NIC sent or received its job's timed 12 MiB, at
  // least one packet per 4 KiB (RoCE's largest MTU).
  for (const auto& dev : d) CHECK(packets[dev] >= kTimedWindows * kWindow * kBytes / 4096);
  // ...and only rail A's NICs grew sequence errors.
  const std::uint64_t seq_a = seq[d[0]] + seq[d[1]];
  const std::uint64_t seq_b = seq[d[2]] + seq[d[3]];
  CHECK(seq_a >= 20);
  CHECK(seq_b * 10 < seq_a);
  // The summary printed when the command ended names rail A's sequence errors among its
  // findings ("#   rxe0:1: errors: ..., rcvd_seq_err +N, ...").
  const std::regex finding("#   " + d[0] +
                           "[^\\n]*: errors: [^\\n]*(out_of_seq_request|rcvd_seq_err) \\+");
  CHECK(std::regex_search(w.out, finding));
}
