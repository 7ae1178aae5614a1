#include "emulated_hosts.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "rxe_env.hpp"

namespace ibscope::test::rxe {

using nlohmann::json;

std::string HostsRun::describe() const {
  std::string s =
      "emulated_hosts.sh exit " + std::to_string(script.exit_code) + "\n" + script.out + script.err;
  for (std::size_t r = 0; r < rc.size(); ++r) {
    s += "--- rank " + std::to_string(r) + " exit " + std::to_string(rc[r]) + "\nstderr:\n" +
         err[r] + "stdout (head):\n" + out[r].substr(0, 1500) + "\n";
  }
  return s;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

int next_port() {
  static int port = 29700;
  return port++;
}

/// Every "wrong" count anywhere in `j`.
void collect_wrong(const json& j, std::vector<long>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == "wrong" && v.is_number()) out.push_back(v.get<long>());
      collect_wrong(v, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) collect_wrong(v, out);
  }
}

}  // namespace

ProcessSpec hosts_spec(const std::filesystem::path& logs, int hosts, int per,
                       std::vector<std::string> args, const std::string& host_args,
                       const std::string& out) {
  std::filesystem::remove_all(logs);
  ProcessSpec spec;
  spec.binary = find_in_path("bash");
  spec.args = {IBSCOPE_RXE_SCRIPTS "/emulated_hosts.sh",
               "--logs",
               logs.string(),
               "--hosts",
               std::to_string(hosts),
               "--per",
               std::to_string(per),
               "--port",
               std::to_string(next_port()),
               "--host-args",
               host_args,
               "--limit",
               "200",
               "--"};
  args.insert(args.end(), {"--out", out});
  spec.args.insert(spec.args.end(), args.begin(), args.end());
  spec.env["IBSCOPE_BINARY"] = IBSCOPE_BINARY;
  spec.limit_s = 240;
  return spec;
}

HostsRun collect_ranks(ProcessResult script, const std::filesystem::path& logs, int ranks) {
  HostsRun r;
  r.script = std::move(script);
  for (int i = 0; i < ranks; ++i) {
    const std::string name = "rank" + std::to_string(i);
    r.out.push_back(slurp(logs / (name + ".out")));
    r.err.push_back(slurp(logs / (name + ".err")));
    const std::string rc = slurp(logs / (name + ".rc"));
    r.rc.push_back(rc.empty() ? -1 : std::stoi(rc));
  }
  return r;
}

HostsRun run_hosts(int hosts, int per, std::vector<std::string> args,
                   const std::string& host_args) {
  static int run = 0;
  const std::filesystem::path logs =
      std::filesystem::path("/tmp/ibscope-rxe-hosts") / std::to_string(run++);
  return collect_ranks(run_process(hosts_spec(logs, hosts, per, std::move(args), host_args)), logs,
                       hosts * per);
}

json check_rdma_job(const HostsRun& r, std::size_t ranks) {
  INFO(r.describe());
  REQUIRE(r.script.exit_code == 0);
  const json doc = json::parse(r.out[0]);
  CHECK(doc["complete"] == true);
  const json& env = doc["environment"];
  // The test set no UCX variable: ibscope chose the Soft-RoCE set and each rank's rail.
  CHECK_FALSE(env["ucx_env"].contains("UCX_TLS"));
  CHECK(env["ucx_env_set"]["UCX_TLS"] == "^ud_verbs,sm");
  REQUIRE(env["rails"].size() == ranks);
  for (const auto& [pair, lanes] : env["transports"].items()) {
    INFO(pair << ": " << lanes);
    CHECK(lanes.get<std::string>().find("rc_verbs/") != std::string::npos);
    CHECK(lanes.get<std::string>().find("ud_verbs") == std::string::npos);
  }
  std::vector<long> wrong;
  collect_wrong(doc, wrong);
  for (long w : wrong) CHECK(w == 0);
  return doc;
}

}  // namespace ibscope::test::rxe
