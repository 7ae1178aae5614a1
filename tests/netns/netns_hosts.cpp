#include "netns_hosts.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#include "mp/results_json.hpp"

namespace ibscope::test {
namespace {

std::string hosts_script() { return std::string(IBSCOPE_NETNS_DIR) + "/hosts.sh"; }

// Every namespace has its own port space, so one fixed port fits every test.
constexpr int kRootPort = 29500;

}  // namespace

bool netns_required() {
  const char* v = std::getenv("IBSCOPE_NETNS_REQUIRED");
  return v != nullptr && std::string(v) == "1";
}

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

NetnsHosts::NetnsHosts(int n, const std::string& rate, const std::string& tag)
    : prefix_(tag + std::to_string(::getpid() % 100000)), n_(n) {
  const auto r = run_process({{hosts_script(), "--prefix", prefix_, "up", std::to_string(n),
                               "--rate", rate, "--tcp-retries2", "5"},
                              {},
                              90,
                              "/bin/bash"});
  if (r.exit_code != 0) prefix_.clear();  // `up` removed what it made
  INFO("tests/netns/hosts.sh up: " << describe(r));
  REQUIRE(r.exit_code == 0);
}

NetnsHosts::NetnsHosts(NetnsHosts&& o) noexcept : prefix_(std::move(o.prefix_)), n_(o.n_) {
  o.prefix_.clear();
}

NetnsHosts::~NetnsHosts() {
  if (prefix_.empty()) return;
  try {
    run_process({{hosts_script(), "--prefix", prefix_, "down"}, {}, 60, "/bin/bash"});
  } catch (...) {
    // Never throw from a destructor; `hosts.sh down` also cleans up after a crash.
  }
}

void NetnsHosts::script(const std::vector<std::string>& args) const {
  std::vector<std::string> all{hosts_script(), "--prefix", prefix_};
  all.insert(all.end(), args.begin(), args.end());
  const auto r = run_process({all, {}, 30, "/bin/bash"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
}

void NetnsHosts::rate(int host, const std::string& rate) const {
  script({"rate", std::to_string(host), rate});
}

void NetnsHosts::link(int host, bool up) const {
  script({"link", std::to_string(host), up ? "up" : "down"});
}

void NetnsHosts::rate_to(int host, int peer, const std::string& rate,
                         const std::string& base_rate) const {
  // An htb that does not shape (two classes at 10 Gbit/s), a tbf under each as hosts.sh makes
  // them: the default class at the base rate, the peer's class (a u32 filter on its address) at
  // `rate`. This kernel has htb and tbf, not prio.
  const std::string tc = fmt::format("ip netns exec {} tc", this->host(host));
  const std::string cmd = fmt::format(
      "set -e\n"
      "{0} qdisc del dev {1} root\n"
      "{0} qdisc add dev {1} root handle 1: htb default 2\n"
      "{0} class add dev {1} parent 1: classid 1:1 htb rate 10gbit quantum 60000\n"
      "{0} class add dev {1} parent 1: classid 1:2 htb rate 10gbit quantum 60000\n"
      "{0} qdisc add dev {1} parent 1:2 handle 20: tbf rate {2} burst 256kb latency 50ms\n"
      "{0} qdisc add dev {1} parent 1:1 handle 10: tbf rate {3} burst 256kb latency 50ms\n"
      "{0} filter add dev {1} parent 1: protocol ip prio 1 u32 match ip dst {4}/32 flowid 1:1\n",
      tc, device(), base_rate, rate, address(peer));
  const auto r = run_process({{"-c", cmd}, {}, 30, "/bin/bash"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
}

void NetnsHosts::drop_tcp(int host, int per_mille) const {
  const std::string ns = this->host(host);
  std::string rules =
      fmt::format("ip netns exec {0} nft delete table inet ibscope_loss 2>/dev/null; ", ns);
  if (per_mille > 0) {
    rules += fmt::format(
        "ip netns exec {0} nft -f - <<'EOF'\n"
        "table inet ibscope_loss {{\n"
        "  chain in {{ type filter hook input priority 0; policy accept;\n"
        "    meta l4proto tcp numgen random mod 1000 < {1} drop; }}\n"
        "  chain out {{ type filter hook output priority 0; policy accept;\n"
        "    meta l4proto tcp numgen random mod 1000 < {1} drop; }}\n"
        "}}\n"
        "EOF\n",
        ns, per_mille);
  }
  const auto r = run_process({{"-c", rules}, {}, 30, "/bin/bash"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
}

void NetnsHosts::mark_ce(int host, double mbit) const {
  std::string cmd;
  for (int i = 0; i < n_; ++i) {
    cmd += fmt::format(
        "ip netns exec {0} sysctl -qw net.ipv4.tcp_ecn=1 && "
        "ip -n {0} link set {1} gso_max_size 1500 && ",
        this->host(i), device());
  }
  const auto frames_per_s = static_cast<long>(mbit * 1e6 / (1514.0 * 8.0));
  cmd += fmt::format(
      "ip netns exec {0}-sw nft -f - <<'EOF'\n"
      "table bridge ibscope_ecn {{\n"
      "  chain ce_mark {{ type filter hook forward priority 0; policy accept;\n"
      "    oifname \"p{1}\" ip ecn {{ ect0, ect1 }} limit rate over {2}/second ip ecn set ce "
      "counter; }}\n"
      "}}\n"
      "EOF\n",
      prefix_, host, frames_per_s);
  const auto r = run_process({{"-c", cmd}, {}, 30, "/bin/bash"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
}

NetnsJob::NetnsJob(const NetnsHosts& hosts, std::vector<std::string> args, double limit_s,
                   int ranks, int ranks_per_host)
    : hosts_(hosts),
      args_(std::move(args)),
      limit_s_(limit_s),
      per_host_(ranks_per_host),
      ranks_(ranks > 0 ? ranks : hosts.size() * ranks_per_host),
      root_(hosts.address(0) + ":" + std::to_string(kRootPort)),
      running_(static_cast<std::size_t>(ranks_)),
      ended_at_s_(static_cast<std::size_t>(ranks_), 0.0) {
  REQUIRE(per_host_ >= 1);
  REQUIRE(ranks_ <= hosts.size() * per_host_);
  std::random_device rd;
  token_ = std::to_string((static_cast<std::uint64_t>(rd()) << 32) | rd());
}

void NetnsJob::start(int rank) {
  const std::string& host = hosts_.host(rank / per_host_);
  std::vector<std::string> argv{"netns", "exec", host, ibscope_binary()};
  argv.insert(argv.end(), args_.begin(), args_.end());
  running_.at(static_cast<std::size_t>(rank)) =
      start_process({argv,
                     {{"IBSCOPE_BOOTSTRAP", "tcp"},
                      {"IBSCOPE_RANK", std::to_string(rank)},
                      {"IBSCOPE_SIZE", std::to_string(ranks_)},
                      {"IBSCOPE_ROOT", root_},
                      {"IBSCOPE_TOKEN", token_},
                      {"UCX_TLS", "tcp"},
                      {"UCX_NET_DEVICES", hosts_.device()},
                      {"IBSCOPE_HOSTNAME", host},
                      {"IBSCOPE_YIELD_WHEN_IDLE", "1"}},
                     limit_s_,
                     "/bin/ip"});
}

void NetnsJob::start_all() {
  for (int r = 0; r < ranks_; ++r) start(r);
}

std::vector<ProcessResult> NetnsJob::wait_all(const std::function<void(int)>& on_end) {
  std::vector<ProcessResult> results(running_.size());
  std::vector<std::thread> waiters;
  for (std::size_t r = 0; r < running_.size(); ++r) {
    if (running_[r].pid < 0) continue;
    waiters.emplace_back([this, r, &results, &on_end] {
      results[r] = wait_process(running_[r]);
      ended_at_s_[r] = steady_now_s();
      if (on_end) on_end(static_cast<int>(r));
    });
  }
  for (auto& t : waiters) t.join();
  return results;
}

}  // namespace ibscope::test
