// Faults across processes: a rank that never starts, a rank killed mid-run. Nothing may hang:
// every survivor exits non-zero, in time, with a line naming the lost rank.

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>

#include "ibscope/bootstrap/socket.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

std::uint16_t free_port() {
  auto fd = ibscope::bootstrap::net::listen_tcp({"127.0.0.1", 0});
  return ibscope::bootstrap::net::bound_port(fd.get());
}

}  // namespace

TEST_CASE("a rank that never starts makes the others stop in time naming it", "[mp][faults]") {
  const std::string root = fmt::format("127.0.0.1:{}", free_port());
  const std::string out = make_temp_dir();
  std::vector<Running> ranks;
  for (int r = 0; r < 2; ++r) {  // rank 2 of 3 never starts
    ranks.push_back(
        start_process({{"allreduce", "--sizes", "4K", "-n", "1", "--timeout", "3", "--out", out},
                       {{"IBSCOPE_BOOTSTRAP", "tcp"},
                        {"IBSCOPE_RANK", std::to_string(r)},
                        {"IBSCOPE_SIZE", "3"},
                        {"IBSCOPE_ROOT", root},
                        {"IBSCOPE_TOKEN", "test-token"}},
                       60}));
  }
  for (auto& running : ranks) {
    const auto res = wait_process(running);
    INFO(describe(res));
    CHECK(res.exit_code == 1);
    CHECK(!res.timed_out);
    CHECK(res.elapsed_s < 3 + 5 + 4);  // --timeout + client grace + slack
    CHECK(res.err.find("rank 2 (never connected)") != std::string::npos);
  }
}

TEST_CASE("a rank killed mid-run makes the others exit non-zero naming it", "[mp][faults]") {
  const std::string out = make_temp_dir();
  Running job = start_process({{"allreduce", "--np", "3", "--sizes", "1M", "-n", "1000000",
                                "--timeout", "30", "--out", out},
                               {},
                               90});
  // Wait until all three ranks are up and measuring, then kill rank 1.
  const int victim = rank_pid(job, 1);
  REQUIRE(victim > 0);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto [res, after_kill_s] = kill_rank_and_wait(job, victim);
  INFO(describe(res));
  CHECK(!res.timed_out);
  CHECK(res.exit_code == 1);
  CHECK(after_kill_s < 15);                                 // well within --timeout 30
  CHECK(res.err.find("rank 1 (pid") != std::string::npos);  // the launcher's line
  CHECK(res.err.find("killed by signal 9") != std::string::npos);
  // The survivors' own errors name the lost rank too.
  CHECK(res.err.find("ibscope[rank 0") != std::string::npos);
  CHECK(res.err.find("rank 1 (") != std::string::npos);
  // Rank 0 keeps what it measured before the fault, marked incomplete.
  const auto doc = load_run_results(res);
  CHECK_FALSE(doc.at("complete").get<bool>());
  CHECK(doc.at("error").at("message").get<std::string>().find("rank 1") != std::string::npos);
}

TEST_CASE("a stranger without the job token is refused and the job completes", "[mp][faults]") {
  const std::string root = fmt::format("127.0.0.1:{}", free_port());
  const std::string out = make_temp_dir();
  std::vector<Running> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.push_back(
        start_process({{"allreduce", "--sizes", "4K", "-n", "1", "--timeout", "10", "--out", out},
                       {{"IBSCOPE_BOOTSTRAP", "tcp"},
                        {"IBSCOPE_RANK", std::to_string(r)},
                        {"IBSCOPE_SIZE", "2"},
                        {"IBSCOPE_ROOT", root},
                        {"IBSCOPE_TOKEN", "right-token"}},
                       60}));
    if (r == 0) {
      // A stranger claiming rank 1 with the wrong token races the real rank 1.
      const auto stranger =
          start_process({{"allreduce", "--sizes", "4K", "-n", "1", "--timeout", "5", "--out", out},
                         {{"IBSCOPE_BOOTSTRAP", "tcp"},
                          {"IBSCOPE_RANK", "1"},
                          {"IBSCOPE_SIZE", "2"},
                          {"IBSCOPE_ROOT", root},
                          {"IBSCOPE_TOKEN", "wrong-token"}},
                         60});
      Running s = stranger;
      const auto sres = wait_process(s);
      INFO(describe(sres));
      CHECK(sres.exit_code == 1);
      CHECK(sres.err.find("wrong job token") != std::string::npos);
    }
  }
  const auto r0 = wait_process(ranks[0]);
  const auto r1 = wait_process(ranks[1]);
  INFO(describe(r0) << describe(r1));
  CHECK(r0.exit_code == 0);
  CHECK(r1.exit_code == 0);
  CHECK(r0.err.find("bootstrap: refused 127.0.0.1:") != std::string::npos);
}

TEST_CASE(
    "a UCX_TLS that reaches no peer is one line per rank naming the peer, its host and the "
    "variables",
    "[mp][faults][ucx]") {
  const auto r = run_process({{"allreduce", "--np", "2", "-b", "8", "-e", "8", "--timeout", "20",
                               "--out", make_temp_dir()},
                              {{"UCX_TLS", "self"}},
                              60});
  INFO(describe(r));
  CHECK(r.exit_code != 0);
  CHECK_FALSE(r.timed_out);
  // Each rank creates its endpoints when it first talks to a peer (docs/scale.md): the rank that
  // fails first aborts the job, so the other says either its own failure or that one, relayed
  // with the failing rank's name.
  CHECK_THAT(r.err, Catch::Contains("ibscope[rank 0 ") && Catch::Contains("ibscope[rank 1 "));
  CHECK_THAT(r.err, Catch::Contains("ucp_ep_create to rank 1: ") ||
                        Catch::Contains("aborted: ucp_ep_create to rank 0: "));
  CHECK_THAT(r.err, Catch::Contains("ucp_ep_create to rank 0: ") ||
                        Catch::Contains("aborted: ucp_ep_create to rank 1: "));
  CHECK_THAT(r.err, Catch::Contains("with UCX_TLS=self UCX_NET_DEVICES=<unset>") &&
                        Catch::Contains("is on ") && Catch::Contains("docs/ucx-transports.md"));
}

TEST_CASE("a NIC (--nic) the host lacks is a usage error listing what it has",
          "[mp][faults][ucx]") {
  if (host_has_rdma_devices()) return;  // the path under test needs a host without RDMA
  const auto r = run_process({{"allreduce", "--np", "2", "--nic", "mlx5_7", "-b", "8", "-e", "8",
                               "--timeout", "20", "--out", make_temp_dir()},
                              {},
                              60});
  INFO(describe(r));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--nic mlx5_7: ") &&
                        Catch::Contains("has no RDMA device of that name (it has: none)"));
}

namespace {

// Starts a 3-rank sweep through the local launcher, waits until every rank is up and the first
// rows are measured, and returns it running.
Running start_long_sweep(const std::string& out) {
  Running job = start_process({{"allreduce", "--np", "3", "-b", "8", "-e", "64M", "-f", "2", "-n",
                                "200", "--timeout", "30", "--out", out},
                               {},
                               120});
  for (int i = 0; i < 100 && children_of(job.pid).size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));  // rows of the small sizes are done
  return job;
}

}  // namespace

TEST_CASE("Ctrl-C (SIGINT to the launcher) keeps every row measured and exits 130",
          "[mp][faults][signals]") {
  const std::string out = make_temp_dir();
  Running job = start_long_sweep(out);
  const std::vector<int> ranks = children_of(job.pid);
  const auto sent_at = std::chrono::steady_clock::now();
  ::kill(job.pid, SIGINT);
  const auto res = wait_process(job);
  const double after_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent_at).count();
  INFO(describe(res));
  CHECK_FALSE(res.timed_out);
  CHECK(res.exit_code == 130);
  CHECK(after_s < 10);
  CHECK_THAT(res.err, Catch::Contains("interrupted by SIGINT on rank 0"));
  const auto doc = load_run_results(res);
  CHECK_FALSE(doc.at("complete").get<bool>());
  CHECK(doc.at("error").at("kind") == "interrupted");
  CHECK_THAT(doc.at("error").at("message").get<std::string>(),
             Catch::Contains("interrupted by SIGINT"));
  // Every row printed before the signal is in the file.
  std::size_t printed = 0;
  std::istringstream lines(res.out);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find_first_not_of(' ');  // table rows: "       8   2  float ..."
    if (first != std::string::npos && std::isdigit(static_cast<unsigned char>(line[first]))) {
      ++printed;
    }
  }
  CHECK(printed >= 2);
  CHECK(doc.at("collectives").at("rows").size() >=
        2 * printed);                                // out of place + in place per line
  for (int pid : ranks) CHECK(::kill(pid, 0) != 0);  // no rank left running
}

TEST_CASE("a second Ctrl-C ends the job at once", "[mp][faults][signals]") {
  const std::string out = make_temp_dir();
  Running job = start_long_sweep(out);
  ::kill(job.pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto second_at = std::chrono::steady_clock::now();
  ::kill(job.pid, SIGINT);
  const auto res = wait_process(job);
  const double after_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - second_at).count();
  INFO(describe(res));
  CHECK_FALSE(res.timed_out);
  CHECK(res.exit_code != 0);
  CHECK(after_s < 1.5);
}
