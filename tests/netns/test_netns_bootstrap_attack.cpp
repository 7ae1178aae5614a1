// The bootstrap under attack from another host (issue 9): rank 0 serves the TCP store on host 0
// while strangers on host 2, which is not part of the job, reach the store across the switch:
// an ibscope that presents a wrong token, a shell that sends garbage, and one that connects and
// stays silent. Only then does the real rank 1 (host 1) start. The job must complete, and
// rank 0's log must name each refusal with the stranger's address on host 2.

#include <signal.h>

#include <catch2/catch.hpp>

#include "mp/results_json.hpp"
#include "netns_hosts.hpp"

using namespace ibscope::test;

TEST_CASE("netns: strangers on another host are refused and logged, the job completes",
          "[netns][attack]") {
  NetnsHosts hosts(3, "1gbit", "na");
  constexpr int kStranger = 2;
  const std::string out = make_temp_dir();
  const std::vector<std::string> args = {"allreduce", "-b", "8",         "-e", "64K",   "-n", "5",
                                         "-w",        "1",  "--timeout", "20", "--out", out,  "-q"};
  NetnsJob job(hosts, args, 60, /*ranks=*/2);
  job.start(0);
  const std::string stranger_addr = hosts.address(kStranger);
  const std::string root = job.root();
  const std::string root_host = root.substr(0, root.find(':'));
  const std::string root_port = root.substr(root.find(':') + 1);

  // A would-be rank 1 with a wrong token; it retries until the store listens, so once it has
  // its answer, the store is up for the shell strangers below.
  std::vector<std::string> argv{"netns", "exec", hosts.host(kStranger), ibscope_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto impostor = run_process({argv,
                                     {{"IBSCOPE_BOOTSTRAP", "tcp"},
                                      {"IBSCOPE_RANK", "1"},
                                      {"IBSCOPE_SIZE", "2"},
                                      {"IBSCOPE_ROOT", root},
                                      {"IBSCOPE_TOKEN", "not-the-token"},
                                      {"UCX_TLS", "tcp"},
                                      {"IBSCOPE_HOSTNAME", hosts.host(kStranger)}},
                                     30,
                                     "/bin/ip"});
  {
    INFO(describe(impostor));
    CHECK(impostor.exit_code == 1);
    CHECK(impostor.err.find("wrong job token") != std::string::npos);
  }
  const std::string tcp = "/dev/tcp/" + root_host + "/" + root_port;
  const auto garbage =
      run_process({{"netns", "exec", hosts.host(kStranger), "bash", "-c",
                    "exec 3<>" + tcp +
                        " && printf 'GET / HTTP/1.1\\r\\n\\r\\n' >&3 && timeout 5 cat <&3 | "
                        "tr -c '[:print:]' '.'"},
                   {},
                   20,
                   "/bin/ip"});
  {
    INFO(describe(garbage));
    CHECK(garbage.exit_code == 0);
    CHECK(garbage.out.find("frame length") != std::string::npos);  // the refusal's text
  }
  // Silent until killed when the test ends (its process group dies with wait_process).
  Running silent = start_process(
      {{"netns", "exec", hosts.host(kStranger), "bash", "-c", "exec 3<>" + tcp + " && sleep 60"},
       {},
       90,
       "/bin/ip"});

  job.start(1);
  const auto res = job.wait_all();
  ::kill(-silent.pid, SIGKILL);
  (void)wait_process(silent);
  for (const auto& p : res) {
    INFO(describe(p));
    REQUIRE(p.exit_code == 0);
  }
  const auto doc = load_run_results(res[0]);
  for (const auto& row : doc["collectives"]["rows"]) CHECK(row["wrong"].get<int>() == 0);
  INFO(describe(res[0]));
  const auto refusals = lines_with(res[0].err, "bootstrap: refused " + stranger_addr + ":");
  REQUIRE(refusals.size() == 2);
  CHECK(refusals[0].find("wrong job token") != std::string::npos);
  CHECK(refusals[1].find("frame length") != std::string::npos);
}
