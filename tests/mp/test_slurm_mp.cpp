// Real Slurm: a throw-away single-node cluster (munged, slurmctld, slurmd in a temp dir,
// tests/launchers/slurm.sh) starts ibscope with `srun --mpi=pmix`; the ranks find each other
// through PMIx. Each test starts its own cluster (about 1.5 s) and stops it whatever happens.
// `ibscope accept` runs on emulated hosts: labelled per task (UCX over TCP on loopback), and
// placed after PMIx_Init into network-namespace hosts (tests/netns/hosts.sh, IBSCOPE_NETNS)
// whose links are shaped, where the slow host must be the one named.
//
// Where Slurm cannot run here (binaries missing, not root) the tests warn and pass, unless
// IBSCOPE_SLURM_REQUIRED=1 (CI), which makes them fail instead.

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "../common/text_lines.hpp"
#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/build_info.hpp"
#include "results_json.hpp"
#include "run_files.hpp"

using namespace ibscope::test;

namespace {

bool slurm_required() {
  const char* v = std::getenv("IBSCOPE_SLURM_REQUIRED");
  return v != nullptr && std::string(v) == "1";
}

/// The throw-away cluster; stopped (jobs cancelled, daemons killed, dir removed) on scope exit.
class SlurmCluster {
 public:
  /// Starts a cluster, or returns nullopt after a WARN (skip) or a FAIL (required / broken).
  static std::optional<SlurmCluster> start() {
    if (!ibscope::build::kHavePmix) {
      if (slurm_required()) FAIL("ibscope was built without PMIx: srun --mpi=pmix can't work");
      WARN("ibscope was built without PMIx: Slurm tests skipped");
      return std::nullopt;
    }
    const auto r = run_process({{IBSCOPE_SLURM_SCRIPT, "start"}, {}, 60, "/bin/bash"});
    if (r.exit_code == 77 && !slurm_required()) {
      WARN("throw-away Slurm unavailable, skipped: " << r.err);
      return std::nullopt;
    }
    INFO("tests/launchers/slurm.sh start: " << describe(r));
    REQUIRE(r.exit_code == 0);
    SlurmCluster c;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      const auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
      if (key == "SLURM_CONF") c.conf_ = value;
      if (key == "IBSCOPE_SLURM_DIR") c.dir_ = value;
      if (key == "IBSCOPE_SLURM_MPI") c.mpi_ = " " + value + " ";
    }
    REQUIRE(!c.dir_.empty());
    REQUIRE(!c.conf_.empty());
    INFO("srun --mpi=list:" << c.mpi_);
    REQUIRE(c.mpi_.find(" pmix ") != std::string::npos);
    return c;
  }

  SlurmCluster(SlurmCluster&& o) noexcept : dir_(std::move(o.dir_)), conf_(o.conf_), mpi_(o.mpi_) {
    o.dir_.clear();
  }
  SlurmCluster& operator=(SlurmCluster&&) = delete;
  ~SlurmCluster() {
    if (dir_.empty()) return;
    run_process({{IBSCOPE_SLURM_SCRIPT, "stop", dir_}, {}, 30, "/bin/bash"});
  }

  const std::string& conf() const { return conf_; }

  /// `srun ARGS...` against this cluster, with any SLURM_* variables of an outer allocation
  /// removed (a test run inside a real job must not talk to that job's controller).
  ProcessSpec srun(std::vector<std::string> args, double limit_s = 120,
                   std::map<std::string, std::string> env = {}) const {
    std::vector<std::string> all{
        "-c",
        "unset $(compgen -e | grep '^SLURM_' | grep -vx SLURM_CONF) PMIX_RANK PMIX_NAMESPACE; "
        "exec srun \"$@\"",
        "srun"};
    all.insert(all.end(), args.begin(), args.end());
    env["SLURM_CONF"] = conf_;
    return {all, env, limit_s, "/bin/bash"};
  }

  /// Pids of this cluster's ibscope tasks with SLURM_PROCID == rank.
  std::vector<int> task_pids(int rank) const {
    std::vector<int> pids;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::error_code ec2;
      const auto exe = std::filesystem::read_symlink(entry.path() / "exe", ec2);
      if (ec2 || exe.filename() != "ibscope") continue;
      const std::string env = read_text_file(entry.path() / "environ");
      std::string conf_var = "SLURM_CONF=" + conf_;
      conf_var.push_back('\0');
      std::string rank_var = "SLURM_PROCID=" + std::to_string(rank);
      rank_var.push_back('\0');
      if (env.find(conf_var) != std::string::npos &&
          (env.rfind(rank_var, 0) == 0 ||
           env.find(std::string(1, '\0') + rank_var) != std::string::npos)) {
        pids.push_back(std::stoi(name));
      }
    }
    return pids;
  }

 private:
  SlurmCluster() = default;
  std::string dir_, conf_, mpi_;
};

/// Network-namespace hosts (tests/netns/hosts.sh) under a prefix of their own, removed on scope
/// exit whatever happened.
class NetnsHosts {
 public:
  static std::optional<NetnsHosts> up(int n, const std::string& rate) {
    NetnsHosts h;
    h.prefix_ = "sl" + std::to_string(::getpid() % 1000000);
    const auto r = run_process({{hosts_script(), "--prefix", h.prefix_, "up", std::to_string(n),
                                 "--rate", rate, "--tcp-retries2", "5"},
                                {},
                                60,
                                "/bin/bash"});
    if (r.exit_code != 0) {
      h.prefix_.clear();  // `up` removed what it made
      if (slurm_required()) FAIL("tests/netns/hosts.sh up failed: " << describe(r));
      WARN("network-namespace hosts unavailable, skipped: " << r.err);
      return std::nullopt;
    }
    return h;
  }
  NetnsHosts(NetnsHosts&& o) noexcept : prefix_(std::move(o.prefix_)) { o.prefix_.clear(); }
  NetnsHosts& operator=(NetnsHosts&&) = delete;
  ~NetnsHosts() {
    if (!prefix_.empty()) {
      run_process({{hosts_script(), "--prefix", prefix_, "down"}, {}, 60, "/bin/bash"});
    }
  }
  void rate(int host, const std::string& rate) const {
    const auto r =
        run_process({{hosts_script(), "--prefix", prefix_, "rate", std::to_string(host), rate},
                     {},
                     30,
                     "/bin/bash"});
    INFO(describe(r));
    REQUIRE(r.exit_code == 0);
  }
  std::string host(int i) const { return prefix_ + "-h" + std::to_string(i); }
  std::string device() const { return prefix_ + "-eth"; }  // hosts.sh's default device name
  const std::string& prefix() const { return prefix_; }

 private:
  NetnsHosts() = default;
  static std::string hosts_script() {
    // tests/launchers/slurm.sh -> tests/netns/hosts.sh
    return (std::filesystem::path(IBSCOPE_SLURM_SCRIPT).parent_path().parent_path() / "netns" /
            "hosts.sh")
        .string();
  }
  std::string prefix_;
};

/// `ibscope accept` flags of the issue's shaped-link scenario: links judged against
/// `expect_gbps` (Gb/s on the wire), small bandwidth windows, no all-reduce sweep.
std::vector<std::string> accept_args(const std::string& expect_gbps, const std::string& kind,
                                     const std::string& out) {
  return {"accept", "--transport", "ucx",  "--expect-gbps", expect_gbps, "--link-kind",
          kind,     "--bw-size",   "256K", "--bw-window",   "8",         "--bw-iters",
          "6",      "--out",       out,    "--timeout",     "60"};
}

/// Starts `spec`, waits until task `rank` runs, lets the job measure 2 s, kills that task.
/// Returns the job's result and the seconds from the kill to the job's end.
std::pair<ProcessResult, double> kill_task_midway(const SlurmCluster& c, const ProcessSpec& spec,
                                                  int rank) {
  Running job = start_process(spec);
  std::vector<int> victims;
  for (int i = 0; i < 300 && victims.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    victims = c.task_pids(rank);
  }
  if (victims.empty()) {
    ::kill(-job.pid, SIGKILL);
    const auto res = wait_process(job);
    INFO(describe(res));
    FAIL("task " << rank << " of the srun job never appeared");
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto killed_at = std::chrono::steady_clock::now();
  for (int pid : victims) ::kill(pid, SIGKILL);
  auto res = wait_process(job);
  const double after_kill_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  return {std::move(res), after_kill_s};
}

}  // namespace

TEST_CASE("srun --mpi=pmix starts ibscope allreduce, ranks find each other through PMIx",
          "[mp][launcher][slurm]") {
  auto cluster = SlurmCluster::start();
  if (!cluster) return;
  const std::string out = make_temp_dir();
  const auto r = run_process(
      cluster->srun({"--mpi=pmix", "-n", "4", "--overcommit", ibscope_binary(), "allreduce", "-b",
                     "8", "-e", "1M", "--timeout", "30", "--out", out}));
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  const auto doc = load_run_results(r);
  CHECK(doc.at("job").at("bootstrap") == "pmix");
  CHECK(doc.at("job").at("ranks") == 4);
  CHECK(doc.at("complete").get<bool>());
  REQUIRE(!doc.at("collectives").at("rows").empty());
  for (const auto& row : doc.at("collectives").at("rows")) CHECK(row.at("wrong").get<int>() == 0);
}

TEST_CASE("srun --mpi=pmix starts ibscope p2p latency", "[mp][launcher][slurm]") {
  auto cluster = SlurmCluster::start();
  if (!cluster) return;
  const std::string out = make_temp_dir();
  const auto r = run_process(
      cluster->srun({"--mpi=pmix", "-n", "4", "--overcommit", ibscope_binary(), "p2p", "--tests",
                     "latency", "-e", "64", "--timeout", "30", "--out", out}));
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  const auto doc = load_run_results(r);
  CHECK(doc.at("job").at("bootstrap") == "pmix");
  CHECK(doc.at("job").at("ranks") == 4);
  CHECK(doc.at("complete").get<bool>());
}

TEST_CASE("srun --mpi=pmix starts ibscope accept: every link between the task hosts judged",
          "[mp][launcher][slurm][accept]") {
  auto cluster = SlurmCluster::start();
  if (!cluster) return;
  const std::string out = make_temp_dir();
  // One emulated host per task (its own label, UCX over TCP), so that the all-pairs phase has
  // 6 links between 4 hosts; the expected rate is one loopback TCP surely exceeds.
  std::vector<std::string> args{"--mpi=pmix",
                                "-n",
                                "4",
                                "--overcommit",
                                "/bin/sh",
                                "-c",
                                "IBSCOPE_HOSTNAME=emu$SLURM_PROCID exec \"$0\" \"$@\"",
                                ibscope_binary()};
  for (const auto& a : accept_args("0.01", "tcp", out)) args.push_back(a);
  for (const auto& a : {"-A", "ring", "--ar-sizes", "64K", "--ar-iters", "5"}) args.push_back(a);
  const auto r = run_process(cluster->srun(args, 120, {{"UCX_TLS", "tcp"}}));
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("ibscope accept: PASS (6 links between 4 hosts") != std::string::npos);
  const auto doc = load_run_results(r);
  CHECK(doc.at("job").at("bootstrap") == "pmix");
  CHECK(doc.at("job").at("ranks") == 4);
  CHECK(doc.at("complete").get<bool>());
  const auto& a = doc.at("acceptance");
  CHECK(a.at("pass").get<bool>());
  REQUIRE(a.at("links").size() == 6);
  for (const auto& l : a.at("links")) {
    CHECK(l.at("pass").get<bool>());
    CHECK(l.at("host_a") == "emu" + std::to_string(l.at("rank_a").get<int>()));
    CHECK(l.at("measured_gbps").get<double>() > 0);
  }
  CHECK(a.at("hosts").size() == 4);
  CHECK(a.at("allreduce").at("wrong") == 0);
}

TEST_CASE("srun --mpi=pmix with IBSCOPE_NETNS: 4 ranks in 4 namespace hosts, the slow one named",
          "[mp][launcher][slurm][accept][netns]") {
  auto cluster = SlurmCluster::start();
  if (!cluster) return;
  // Every host's link at 200 Mbit/s, host 2's at a quarter: its three links, and it alone as
  // the culprit, must fail; the others carry 200 Mbit/s x 1448/1514 = 23.9 MB/s.
  auto hosts = NetnsHosts::up(4, "200mbit");
  if (!hosts) return;
  hosts->rate(2, "50mbit");
  const std::string out = make_temp_dir();
  {
    // A fifth rank has no namespace: every rank stops at once with one line naming it, exit 2.
    const auto bad =
        run_process(cluster->srun({"--mpi=pmix", "-n", "5", "--overcommit", ibscope_binary(), "p2p",
                                   "--timeout", "30", "--out", out},
                                  60, {{"IBSCOPE_NETNS", hosts->prefix() + "-h{rank}"}}));
    INFO(describe(bad));
    CHECK(bad.elapsed_s < 20);
    CHECK(bad.exit_code == 2);  // srun's: the tasks' usage status
    for (int r = 0; r < 5; ++r) {
      const auto at = bad.err.find(fmt::format("ibscope[rank {} ", r));
      INFO("rank " << r);
      REQUIRE(at != std::string::npos);
      const std::string line = bad.err.substr(at, bad.err.find('\n', at) - at);
      CHECK(line.find("network namespace '" + hosts->host(4) + "' does not exist") !=
            std::string::npos);
      CHECK(line.find("ip netns add " + hosts->host(4)) != std::string::npos);
    }
  }
  std::vector<std::string> args{"--mpi=pmix", "-n", "4", "--overcommit", ibscope_binary()};
  for (const auto& a : accept_args("0.2", "tcp-shaped", out)) args.push_back(a);
  // 4 "hosts" on 2 CPUs under ASan: an equal link failed CI on a p50 latency over 3 x the
  // median, and one direction measured 0.898 of the shaped rate here (1 run in 6). The test is
  // about naming the quarter-rate host, so the bands are widened to -20 % and 10 x; accept's
  // default bands are judged on calm links by tests/netns and the unit tests of judge_links.
  for (const auto& a :
       {"--skip-allreduce", "--retests", "1", "--min-fraction", "0.8", "--max-latency-ratio", "10"})
    args.push_back(a);
  const auto r = run_process(cluster->srun(
      args, 150,
      {{"IBSCOPE_NETNS", hosts->prefix() + "-h{rank}"},
       {"UCX_TLS", "tcp"},  // every namespace looks like one node to UCX: no shared memory
       {"UCX_NET_DEVICES", hosts->device()},
       {"IBSCOPE_YIELD_WHEN_IDLE", "1"}}));  // 4 "hosts", one rank each, on 2 CPUs
  INFO(describe(r));
  CHECK(!r.timed_out);
  CHECK(r.exit_code != 0);  // srun's status: every task exits 1 (FAIL)
  CHECK(r.err.find("Exited with exit code 1") != std::string::npos);
  CHECK(r.out.find("FAIL host " + hosts->host(2) + ": all 3 of its links failed") !=
        std::string::npos);
  CHECK(r.out.find("tcp/" + hosts->device()) != std::string::npos);  // UCX used the veth
  const auto doc = load_run_results(r);
  CHECK(doc.at("job").at("bootstrap") == "pmix");
  REQUIRE(doc.at("job").at("hosts").size() == 4);
  for (int i = 0; i < 4; ++i) CHECK(doc.at("job").at("hosts").at(i) == hosts->host(i));
  const auto& a = doc.at("acceptance");
  CHECK_FALSE(a.at("pass").get<bool>());
  REQUIRE(a.at("links").size() == 6);
  for (const auto& l : a.at("links")) {
    const bool slow = l.at("host_a") == hosts->host(2) || l.at("host_b") == hosts->host(2);
    const double fraction = l.at("fraction_of_expected").get<double>();
    INFO(l.dump());
    CHECK(l.at("pass").get<bool>() == !slow);
    if (slow) {
      CHECK(fraction == Approx(0.25).margin(0.05));  // 50 of 200 Mbit/s
    } else {
      CHECK(fraction > 0.8);
      CHECK(fraction < 1.05);
    }
  }
  REQUIRE(a.at("hosts").size() == 4);
  for (const auto& h : a.at("hosts")) {
    INFO(h.dump());
    const bool slow = h.at("host") == hosts->host(2);
    CHECK(h.at("culprit").get<bool>() == slow);
    CHECK(h.at("pass").get<bool>() == !slow);
  }
}

// Whether srun's stderr reports `task` with `status`, in any of its forms: "task 2: Killed",
// "tasks 0,2: Killed", "tasks 0-3: Killed" (srun merges tasks that ended the same way).
static bool srun_reports_task(const std::string& err, int task, const std::string& status) {
  static const std::regex line(R"(tasks? ([0-9,\-]+): )");
  std::istringstream in(err);
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (!std::regex_search(text, m, line) || text.find(": " + status) == std::string::npos) {
      continue;
    }
    std::istringstream list(m[1].str());
    for (std::string item; std::getline(list, item, ',');) {
      const auto dash = item.find('-');
      const int lo = std::stoi(item.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(item.substr(dash + 1));
      if (task >= lo && task <= hi) return true;
    }
  }
  return false;
}

TEST_CASE("srun's task report is read in its merged forms", "[mp][launcher][slurm]") {
  CHECK(srun_reports_task("srun: error: vm: task 2: Killed\n", 2, "Killed"));
  CHECK(srun_reports_task("srun: error: vm: tasks 0,2: Killed\n", 2, "Killed"));
  CHECK(srun_reports_task("srun: error: vm: tasks 0-3: Killed\n", 2, "Killed"));
  CHECK_FALSE(srun_reports_task("srun: error: vm: tasks 0,3: Killed\n", 2, "Killed"));
  CHECK_FALSE(
      srun_reports_task("srun: error: vm: tasks 1-3: Exited with exit code 1\n", 2, "Killed"));
}

TEST_CASE("a task killed under srun --mpi=pmix ends the whole step in time, naming it",
          "[mp][launcher][slurm]") {
  auto cluster = SlurmCluster::start();
  if (!cluster) return;
  const std::string out = make_temp_dir();
  // -K0: no --kill-on-bad-exit, whatever a site sets; Slurm's PMIx plugin still cancels the
  // step about a second after a PMIx client dies (its error handler), telling the survivors
  // nothing: each must notice by itself, in time, and name the lost rank, unless that
  // cancellation kills it first (srun then reports it Killed: seen once in 2026-12-07's CI,
  // all three survivors killed 1.19 s after the kill). The TCP-store case below, where no
  // plugin cancels the step, requires every survivor's line.
  const auto [r, after_kill_s] = kill_task_midway(
      *cluster,
      cluster->srun({"--mpi=pmix", "-n", "4", "--overcommit", "-K0", ibscope_binary(), "allreduce",
                     "-e", "64M", "-n", "1000", "--timeout", "10", "--out", out},
                    90),
      2);
  INFO(describe(r) << "\nseconds from the kill to the end: " << after_kill_s);
  CHECK(!r.timed_out);
  CHECK(r.exit_code != 0);
  CHECK(after_kill_s < 10 + 5);                  // --timeout + 5 s
  CHECK(srun_reports_task(r.err, 2, "Killed"));  // srun names the lost rank
  CHECK(cluster->task_pids(0).empty());          // nothing left running
  CHECK(cluster->task_pids(3).empty());
  for (const int survivor : {0, 1, 3}) {
    const std::string prefix = fmt::format("ibscope[rank {} ", survivor);
    const auto at = r.err.find(prefix);
    INFO(prefix);
    if (at == std::string::npos && srun_reports_task(r.err, survivor, "Killed")) {
      WARN(prefix << "was killed by the step's cancellation before it noticed the loss");
      continue;
    }
    REQUIRE(at != std::string::npos);  // its one error line, before the launcher's teardown
    const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
    CHECK(line.find("lost rank 2 (") != std::string::npos);
  }
}

TEST_CASE("a task killed under srun with the TCP store: every survivor names it and exits 1",
          "[mp][launcher][slurm]") {
  auto cluster = SlurmCluster::start();
  if (!cluster) return;
  const std::string out = make_temp_dir();
  // Without PMIx nothing in Slurm aborts the step: ibscope's own loss detection must end it.
  const std::string root =
      "127.0.0.1:" + std::to_string(ibscope::bootstrap::net::bound_port(
                         ibscope::bootstrap::net::listen_tcp({"127.0.0.1", 0}).get()));
  const auto [r, after_kill_s] = kill_task_midway(
      *cluster,
      cluster->srun({"--mpi=none", "-n", "4", "--overcommit", "-K0", ibscope_binary(), "allreduce",
                     "-e", "64M", "-n", "1000", "--timeout", "10", "--out", out},
                    90, {{"IBSCOPE_ROOT", root}, {"IBSCOPE_TOKEN", "slurm-test-token"}}),
      2);
  INFO(describe(r) << "\nseconds from the kill to the end: " << after_kill_s);
  CHECK(!r.timed_out);
  CHECK(r.exit_code != 0);
  CHECK(after_kill_s < 10 + 5);
  CHECK(r.err.find("task 2: Killed") != std::string::npos);
  for (const char* survivor : {"ibscope[rank 0 ", "ibscope[rank 1 ", "ibscope[rank 3 "}) {
    const auto at = r.err.find(survivor);
    INFO(survivor);
    REQUIRE(at != std::string::npos);
    CHECK(r.err.substr(at, r.err.find('\n', at) - at).find("rank 2 (") != std::string::npos);
  }
  CHECK(r.err.find("Exited with exit code 1") != std::string::npos);
}

TEST_CASE("scancel of a running srun step keeps every row measured and says SIGTERM",
          "[mp][launcher][slurm][signals]") {
  auto cluster = SlurmCluster::start();
  if (!cluster) return;
  const std::string out = make_temp_dir();
  Running job = start_process(cluster->srun(
      {"--mpi=pmix", "-n", "2", "--overcommit", "-J", "ibscope-scancel", ibscope_binary(),
       "allreduce", "-b", "8", "-e", "256M", "-n", "200", "--timeout", "30", "--out", out},
      90));
  const bool ready = wait_for_checkpoint(out, 4, "collectives");
  // scancel: SIGTERM to every task, SIGKILL after KillWait (2 s in tests/launchers/slurm.sh).
  const auto cancel = run_process({{"-c", "scancel --name ibscope-scancel"},
                                   {{"SLURM_CONF", cluster->conf()}},
                                   30,
                                   "/bin/bash"});
  const auto r = wait_process(job);
  INFO(describe(r) << "\nscancel: " << describe(cancel));
  REQUIRE(ready);
  CHECK(cancel.exit_code == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code != 0);
  const auto doc = load_run_results(r);
  CHECK_FALSE(doc.at("complete").get<bool>());
  CHECK(doc.at("error").at("kind") == "interrupted");
  CHECK_THAT(doc.at("error").at("message").get<std::string>(), Catch::Contains("SIGTERM"));
  CHECK(doc.at("collectives").at("rows").size() >= 4);
  CHECK(files_in(out).size() == 1);  // the results file; the checkpoint is gone
  CHECK(cluster->task_pids(0).empty());
  CHECK(cluster->task_pids(1).empty());
}
