// Rank 0's store and the open-file limit (issue 35, item 9), with the real binary as rank 0 and
// this process playing the other ranks as thin clients of the store's wire protocol.
//
// A fresh shell has a soft limit of 1024 descriptors (and a higher hard limit): before the fix,
// rank 0 never raised it, accept4 failed with EMFILE past ~1,015 connections, the store took
// that for "no more connections" and spun on a core, and the ranks past it never got an answer.
// Now every ibscope raises its soft limit to the hard one at start. Where even the hard limit
// is too low, rank 0 says so when it starts, closes strangers' connections to admit ranks, and
// otherwise waits without spinning.

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/bootstrap/wire.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/fd_limit.hpp"
#include "process.hpp"
#include "results_json.hpp"

using namespace ibscope::test;
namespace net = ibscope::bootstrap::net;
namespace wire = ibscope::bootstrap::wire;

namespace fd_limit_mp {

constexpr const char* kToken = "fd-limit-test-token";

std::uint16_t unused_loopback_port() {
  auto fd = net::listen_tcp({"127.0.0.1", 0});
  return net::bound_port(fd.get());
}

// CPU seconds (user + system) `pid` has used so far, from /proc/<pid>/stat; -1 if unknown.
double cpu_seconds(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  if (paren == std::string::npos) return -1;
  std::istringstream fields(text.substr(paren + 2));  // from field 3, the state
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The "Max open files" soft limit of `pid`, from /proc/<pid>/limits; 0 if unknown.
std::uint64_t soft_fd_limit_of(int pid) {
  std::ifstream in(fmt::format("/proc/{}/limits", pid));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream fields(line.substr(14));
    std::string soft;
    fields >> soft;
    return soft == "unlimited" ? ibscope::kUnlimitedFds : std::stoull(soft);
  }
  return 0;
}

// Rank 0 of a job of `size`: the real ibscope, started from bash with `limit` ("ulimit -Sn
// 1024": a fresh shell's soft limit; "ulimit -n 200": soft and hard).
Running start_rank0(const std::string& root, int size, const std::string& limit) {
  return start_process(
      {{"-c", limit + " && exec \"$0\" allreduce -b 8 -e 8 -n 1 -w 0 --timeout 20 -q",
        ibscope_binary()},
       {{"IBSCOPE_BOOTSTRAP", "tcp"},
        {"IBSCOPE_RANK", "0"},
        {"IBSCOPE_SIZE", std::to_string(size)},
        {"IBSCOPE_ROOT", root},
        {"IBSCOPE_TOKEN", kToken},
        {"IBSCOPE_LOG_LEVEL", "debug"},
        {"UCX_TLS", "tcp"}},
       60,
       "/bin/bash"});
}

// Thin ranks (or silent strangers) connected to the store.
class ThinClients {
 public:
  ThinClients(const net::HostPort& root, int size) : root_(root), size_(size) {}

  /// Connects `n` more; with `first_rank` >= 0 each says hello as the next rank.
  void connect(int n, int first_rank) {
    for (int i = 0; i < n; ++i) {
      fds_.push_back(net::connect_tcp(root_, ibscope::Deadline(10), "rank 0's store"));
      if (first_rank < 0) continue;
      const auto hello =
          wire::encode(wire::Hello{kToken, static_cast<std::uint32_t>(first_rank + i),
                                   static_cast<std::uint32_t>(size_), "thin"});
      net::write_all(fds_.back().get(), hello.data(), hello.size());
    }
  }

  /// Waits up to `wait_s` for the first frame on connections [from, to); the types seen
  /// (0: nothing, or closed).
  std::vector<int> first_frames(std::size_t from, std::size_t to, double wait_s) {
    std::vector<int> type(to - from, 0);
    std::vector<pollfd> pfds;
    for (std::size_t i = from; i < to; ++i) pfds.push_back({fds_[i].get(), POLLIN, 0});
    std::size_t left = pfds.size();
    const ibscope::Deadline deadline(wait_s);
    while (left > 0 && !deadline.expired()) {
      if (::poll(pfds.data(), pfds.size(), 100) <= 0) continue;
      for (std::size_t i = 0; i < pfds.size(); ++i) {
        if (pfds[i].fd < 0 || pfds[i].revents == 0) continue;
        std::array<std::byte, wire::kHeaderBytes> header{};
        if (net::read_exact(pfds[i].fd, header.data(), header.size(), ibscope::Deadline(1))) {
          type[i] = static_cast<int>(wire::decode_header(header, wire::kMaxPreAuthFrameBytes).type);
        }
        pfds[i].fd = -1;
        --left;
      }
    }
    return type;
  }

  /// The refusal's reason on connection `i`, or what came instead.
  std::string refusal(std::size_t i) {
    try {
      std::array<std::byte, wire::kHeaderBytes> header{};
      const ibscope::Deadline deadline(2);
      if (!net::read_exact(fds_[i].get(), header.data(), header.size(), deadline)) return "<EOF>";
      const auto h = wire::decode_header(header, wire::kMaxPreAuthFrameBytes);
      ibscope::bootstrap::Bytes payload(h.payload_bytes);
      if (!payload.empty())
        net::read_exact(fds_[i].get(), payload.data(), payload.size(), deadline);
      return h.type == wire::MsgType::kRefused ? wire::decode_refused(payload) : "<not refused>";
    } catch (const std::exception& e) {
      return fmt::format("<{}>", e.what());
    }
  }

  std::size_t size() const { return fds_.size(); }
  void close_all() { fds_.clear(); }

 private:
  net::HostPort root_;
  int size_;
  std::vector<net::Fd> fds_;
};

int count_of(const std::vector<int>& types, wire::MsgType t) {
  return static_cast<int>(std::count(types.begin(), types.end(), static_cast<int>(t)));
}

}  // namespace fd_limit_mp

using namespace fd_limit_mp;

TEST_CASE("a fresh shell's open-file limit (1024): 1,100 ranks join rank 0's store",
          "[mp][bootstrap][fd_limit]") {
  constexpr int kRanks = 1100;
  // This process holds the other 1,099 ranks' sockets: it needs the limit it is testing.
  const auto own = ibscope::raise_fd_limit();
  if (own.hard < 2 * kRanks) {
    WARN("hard open-file limit " << own.hard << ": too low for this test on this host");
    return;
  }
  const std::uint16_t port = unused_loopback_port();
  Running rank0 = start_rank0(fmt::format("127.0.0.1:{}", port), kRanks, "ulimit -Sn 1024");
  ThinClients ranks({"127.0.0.1", port}, kRanks);
  ranks.connect(kRanks - 1, 1);
  const auto answers = ranks.first_frames(0, ranks.size(), 8.0);
  const int welcomed = count_of(answers, wire::MsgType::kWelcome);
  const auto soft = soft_fd_limit_of(rank0.pid);
  // Idle now (every rank is in, rank 0 waits for the host exchange): it must not spin.
  const double cpu0 = cpu_seconds(rank0.pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const double cpu_busy = cpu_seconds(rank0.pid) - cpu0;
  ranks.close_all();  // rank 0 sees its ranks leave, stops the job and exits
  const auto res = wait_process(rank0);
  INFO(describe(res));
  INFO("welcomed " << welcomed << ", rank 0's soft limit " << soft << ", its CPU time in 1 s "
                   << cpu_busy << " s");
  CHECK(welcomed == kRanks - 1);
  CHECK(soft >= kRanks + 64);
  CHECK(cpu_busy < 0.2);
  CHECK_THAT(res.err, Catch::Contains("open-file limit (RLIMIT_NOFILE): raised the soft limit "
                                      "from 1024 to"));
  CHECK_THAT(res.err, !Catch::Contains("cannot accept connections"));
}

TEST_CASE("out of descriptors, rank 0's store drops strangers for ranks and waits, not spins",
          "[mp][bootstrap][fd_limit]") {
  // A hard limit of 200 for a job of 300 ranks: rank 0 warns at once. Strangers that say
  // nothing take every descriptor; ranks that come after them still get in (the oldest stranger
  // is closed for each); once only ranks hold descriptors, the store waits 100 ms between tries.
  constexpr int kSize = 300;
  constexpr int kStrangers = 250;
  constexpr int kEarlyRanks = 100;
  constexpr int kLateRanks = 150;
  if (ibscope::raise_fd_limit().soft < 1024) {  // this process holds 500 sockets
    WARN("open-file limit below 1024: too low for this test on this host");
    return;
  }
  const std::uint16_t port = unused_loopback_port();
  Running rank0 = start_rank0(fmt::format("127.0.0.1:{}", port), kSize, "ulimit -n 200");
  ThinClients clients({"127.0.0.1", port}, kSize);
  clients.connect(kStrangers, -1);
  clients.connect(kEarlyRanks, 1);
  const auto early = clients.first_frames(kStrangers, kStrangers + kEarlyRanks, 5.0);
  const std::string first_stranger = clients.refusal(0);
  clients.connect(kLateRanks, 1 + kEarlyRanks);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the strangers run out
  const double cpu0 = cpu_seconds(rank0.pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const double cpu_busy = cpu_seconds(rank0.pid) - cpu0;
  clients.close_all();
  const auto res = wait_process(rank0);
  INFO(describe(res));
  INFO("welcomed " << count_of(early, wire::MsgType::kWelcome) << " of " << kEarlyRanks
                   << " early ranks; rank 0's CPU time in 1.5 s " << cpu_busy << " s");
  CHECK(count_of(early, wire::MsgType::kWelcome) == kEarlyRanks);
  CHECK_THAT(first_stranger, Catch::StartsWith("server busy: out of file descriptors (limit 200)"));
  CHECK(cpu_busy < 0.15);  // 10 % of a core; spinning took all of one
  CHECK_THAT(res.err, Catch::Contains("rank 0's store needs about 364 open files for 300 ranks") &&
                          Catch::Contains("its open-file limit is 200 and the hard limit 200"));
  CHECK_THAT(res.err, Catch::Contains("cannot accept connections: Too many open files (open-file "
                                      "limit 200, hard limit 200)"));
}
