// The bootstrap of a 1,024 to 10,752-rank job on one machine (issue 23, docs/scale.md).
//
// The store is the real one (TcpStoreServer, as rank 0 runs it); the ranks are thin clients
// speaking its wire protocol (bootstrap/wire.hpp), spread over a few processes with one socket
// each, so that thousands fit on 2 cores. They go through the phases a real job's bootstrap goes
// through, separated so that each is measured alone:
//
//   join      connect, hello (token, rank, host), and the host layout round
//   address   publish a UCX worker address (--address-bytes), fence, look up 4 peers' addresses
//             (ring neighbours, tree parent and child): what transport::Comm does
//   barrier   one fence
//   gather    a stats gather to rank 0 (--stats-bytes per rank): a sweep row's loop times
//   allgather the same addresses by allgather: the protocol before issue 23, for comparison
//             (only up to --allgather-up-to ranks: it costs the root n^2 x address bytes)
//
// For each phase: its wall time (first request to last answer), the bytes and frames rank 0's
// store sent and received, and the most bytes any rank received. For each job size: the store
// process's peak RSS growth. Then the growth exponent between the smallest and largest size
// (bytes ~ n^k) and an extrapolation to 100,000 ranks.
//
//   build/release/bench/ibscope_bench_bootstrap_scale [--ranks 1024,4096,10752] [--procs 4]

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/bootstrap/tcp_store_server.hpp"
#include "ibscope/bootstrap/wire.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"

namespace {

using namespace ibscope;
using bootstrap::Bytes;
namespace wire = bootstrap::wire;
namespace net = bootstrap::net;

constexpr const char* kToken = "scale-bench-token";
constexpr double kTimeoutS = 300;
constexpr int kRanksPerHost = 8;

enum Phase : int { kJoin, kAddress, kBarrier, kGather, kAllgather, kPhaseCount };
constexpr std::array<const char*, kPhaseCount> kPhaseName = {"join", "address", "barrier", "gather",
                                                             "allgather"};

struct Options {
  std::vector<int> ranks = {1024, 4096, 10752};
  int procs = 4;
  std::size_t address_bytes = 400;  // a UCX 1.13 worker address with rc, ud, tcp and sm lanes
  std::size_t stats_bytes = 64;
  int allgather_up_to = 4096;
};

double now_s() { return seconds_between(Clock::time_point{}, Clock::now()); }

std::uint64_t kib_of(const char* field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field, 0) == 0)
      return std::strtoull(line.c_str() + std::strlen(field), nullptr, 10);
  }
  return 0;
}

// What a client process reports to the driver after each phase.
struct PhaseReport {
  double start_s = 0, end_s = 0;
  std::uint64_t max_rank_received = 0;  // bytes, over this process's ranks, this phase
};

// A rank played by a socket: blocking writes (small frames), reads through epoll.
struct ThinRank {
  int rank = 0;
  net::Fd fd;
  Bytes inbuf;
  std::uint64_t received = 0;
  int answers = 0;  // frames of the awaited type this step
};

// The ranks [first, last) of one client process.
class ClientProcess {
 public:
  ClientProcess(const Options& o, int n, int first, int last, std::uint16_t port)
      : o_(o), n_(n), port_(port) {
    for (int r = first; r < last; ++r) ranks_.push_back(ThinRank{r, net::Fd(), {}, 0, 0});
    epoll_ = net::Fd(::epoll_create1(EPOLL_CLOEXEC));
  }

  PhaseReport run(Phase p) {
    PhaseReport rep;
    for (auto& t : ranks_) t.received = 0;
    rep.start_s = now_s();
    switch (p) {
      case kJoin:
        join();
        break;
      case kAddress:
        for (auto& t : ranks_) send(t, wire::encode(wire::Put{"ucx.address.0", address(t.rank)}));
        round(wire::RoundMode::kFence, "UCX worker addresses published", {}, true);
        for (auto& t : ranks_) {
          wire::Get g{0, "ucx.address.0", {}};
          for (int peer : peers(t.rank)) g.ranks.push_back(static_cast<std::uint32_t>(peer));
          send(t, wire::encode(g));
        }
        await(wire::MsgType::kValues, [](const ThinRank&) { return true; });
        break;
      case kBarrier:
        round(wire::RoundMode::kFence, "barrier", {}, true);
        break;
      case kGather:
        round(wire::RoundMode::kGather, "stats", Bytes(o_.stats_bytes, std::byte{7}), false);
        break;
      case kAllgather:
        round(wire::RoundMode::kAllgather, "UCX worker address exchange", {}, true);
        break;
      case kPhaseCount:
        break;
    }
    rep.end_s = now_s();
    for (const auto& t : ranks_)
      rep.max_rank_received = std::max(rep.max_rank_received, t.received);
    return rep;
  }

  void bye() {
    for (auto& t : ranks_) send(t, wire::encode_empty(wire::MsgType::kBye));
  }

 private:
  Bytes address(int rank) const {
    Bytes a(o_.address_bytes);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::byte(static_cast<unsigned>(rank + i));
    return a;
  }

  // Ring neighbours and a binary tree's parent and first child: the peers of ring and tree.
  std::vector<int> peers(int r) const {
    std::vector<int> p = {(r + 1) % n_, (r + n_ - 1) % n_, r > 0 ? (r - 1) / 2 : n_ - 1,
                          2 * r + 1 < n_ ? 2 * r + 1 : 0};
    std::sort(p.begin(), p.end());
    p.erase(std::unique(p.begin(), p.end()), p.end());
    std::erase(p, r);
    return p;
  }

  void join() {
    for (auto& t : ranks_) {
      t.fd = net::connect_tcp({"127.0.0.1", port_}, Deadline(kTimeoutS), "the store");
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = &t;
      ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, t.fd.get(), &ev);
      const std::string host = fmt::format("node{:04d}", t.rank / kRanksPerHost);
      send(t, wire::encode(wire::Hello{kToken, static_cast<std::uint32_t>(t.rank),
                                       static_cast<std::uint32_t>(n_), host}));
    }
    await(wire::MsgType::kWelcome, [](const ThinRank&) { return true; });
    round(wire::RoundMode::kHosts, "hostname exchange", {}, true);
  }

  void round(wire::RoundMode mode, const char* what, const Bytes& data, bool all_wait) {
    const bool payload = mode == wire::RoundMode::kGather || mode == wire::RoundMode::kAllgather;
    for (auto& t : ranks_) {
      Bytes mine = data;
      if (mode == wire::RoundMode::kAllgather) mine = address(t.rank);
      send(t, wire::encode(wire::Contrib{seq_, mode, what, payload ? mine : Bytes()}));
    }
    ++seq_;
    const auto type =
        mode == wire::RoundMode::kHosts ? wire::MsgType::kLayout : wire::MsgType::kResult;
    await(type, [&](const ThinRank& t) { return all_wait || t.rank == 0; });
  }

  void send(ThinRank& t, const Bytes& frame) {
    net::write_all(t.fd.get(), frame.data(), frame.size());
  }

  template <typename Waits>
  void await(wire::MsgType type, Waits waits) {
    std::size_t missing = 0;
    for (auto& t : ranks_) {
      t.answers = 0;
      missing += waits(t) ? 1 : 0;
    }
    std::array<epoll_event, 256> events{};
    const Deadline deadline(kTimeoutS);
    while (missing > 0) {
      if (deadline.expired()) throw TimeoutError(fmt::format("{} answers missing", missing));
      const int k = ::epoll_wait(epoll_.get(), events.data(), events.size(), 1000);
      for (int i = 0; i < k; ++i) {
        auto& t = *static_cast<ThinRank*>(events[static_cast<std::size_t>(i)].data.ptr);
        std::array<char, 1 << 16> buf{};
        while (true) {
          const ssize_t got = ::recv(t.fd.get(), buf.data(), buf.size(), MSG_DONTWAIT);
          if (got == 0) throw RemoteError(fmt::format("rank {}: the store closed", t.rank));
          if (got < 0) break;
          t.received += static_cast<std::uint64_t>(got);
          t.inbuf.insert(t.inbuf.end(), reinterpret_cast<std::byte*>(buf.data()),
                         reinterpret_cast<std::byte*>(buf.data()) + got);
        }
        std::size_t pos = 0;
        while (t.inbuf.size() - pos >= wire::kHeaderBytes) {
          const auto h = wire::decode_header(std::span<const std::byte, wire::kHeaderBytes>(
                                                 t.inbuf.data() + pos, wire::kHeaderBytes),
                                             wire::kMaxFrameBytes);
          if (t.inbuf.size() - pos - wire::kHeaderBytes < h.payload_bytes) break;
          if (h.type == wire::MsgType::kAbort) {
            throw RemoteError(
                wire::decode_abort(
                    std::span(t.inbuf.data() + pos + wire::kHeaderBytes, h.payload_bytes))
                    .reason);
          }
          if (h.type == type && waits(t) && t.answers++ == 0) --missing;
          pos += wire::kHeaderBytes + h.payload_bytes;
        }
        t.inbuf.erase(t.inbuf.begin(), t.inbuf.begin() + static_cast<std::ptrdiff_t>(pos));
      }
    }
  }

  const Options& o_;
  int n_;
  std::uint16_t port_;
  std::vector<ThinRank> ranks_;
  net::Fd epoll_;
  std::uint64_t seq_ = 0;
};

struct PhaseResult {
  bool ran = false;
  double time_s = 0;
  bootstrap::TcpStoreTraffic root;  // this phase's share
  std::uint64_t max_rank_received = 0;
};

struct SizeResult {
  int ranks = 0;
  std::array<PhaseResult, kPhaseCount> phases{};
  double store_rss_growth_mib = 0;
};

// Pipes between the driver and its processes (net:: is for sockets).
void write_exact(int fd, const void* p, std::size_t n) {
  const auto* b = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw SystemError("pipe write", errno);
    b += w;
    n -= static_cast<std::size_t>(w);
  }
}
// False at end of file (the writer died).
bool read_exact(int fd, void* p, std::size_t n) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, b, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    b += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// One job size, in a fresh process (so that its peak RSS is its own): the store here, the ranks
// in `procs` children. Writes the SizeResult to `out_fd`.
void run_size(const Options& o, int n, int out_fd) {
  const std::uint64_t rss_before_kib = kib_of("VmRSS:");
  net::Fd listener = net::listen_tcp({"127.0.0.1", 0}, 4096);
  bootstrap::TcpStoreLimits limits;
  limits.max_pending = 4096;  // thousands of ranks connect at once
  bootstrap::TcpStoreServer store(std::move(listener), n, kToken, kTimeoutS, limits);
  std::vector<Phase> phases = {kJoin, kAddress, kBarrier, kGather};
  if (n <= o.allgather_up_to) phases.push_back(kAllgather);

  struct Child {
    pid_t pid;
    net::Fd to, from;
  };
  std::vector<Child> children;
  const int procs = std::min(o.procs, n);
  for (int c = 0; c < procs; ++c) {
    int down[2], up[2];
    if (::pipe(down) != 0 || ::pipe(up) != 0) throw SystemError("pipe", errno);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(down[1]);
      ::close(up[0]);
      int code = 0;
      try {
        ClientProcess cp(o, n, n * c / procs, n * (c + 1) / procs, store.port());
        for (Phase p; ::read(down[0], &p, sizeof(p)) == sizeof(p);) {
          if (p == kPhaseCount) break;
          const PhaseReport rep = cp.run(p);
          write_exact(up[1], &rep, sizeof(rep));
        }
        cp.bye();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "client process %d: %s\n", c, e.what());
        code = 1;
      }
      std::fflush(stderr);
      ::_exit(code);
    }
    ::close(down[0]);
    ::close(up[1]);
    children.push_back({pid, net::Fd(down[1]), net::Fd(up[0])});
  }

  SizeResult result;
  result.ranks = n;
  bootstrap::TcpStoreTraffic before = store.traffic();
  for (const Phase p : phases) {
    for (auto& ch : children) write_exact(ch.to.get(), &p, sizeof(p));
    PhaseResult& r = result.phases[static_cast<std::size_t>(p)];
    double start = 1e300, end = 0;
    for (auto& ch : children) {
      PhaseReport rep;
      if (!read_exact(ch.from.get(), &rep, sizeof(rep))) throw RemoteError("a client process died");
      start = std::min(start, rep.start_s);
      end = std::max(end, rep.end_s);
      r.max_rank_received = std::max(r.max_rank_received, rep.max_rank_received);
    }
    // Non-waiting senders (a gather) may be answered after their process reported: let the
    // store's counters settle before reading them.
    for (auto t = store.traffic();;) {
      ::usleep(20000);
      const auto again = store.traffic();
      if (again.frames_received == t.frames_received && again.bytes_sent == t.bytes_sent) break;
      t = again;
    }
    const auto after = store.traffic();
    r.ran = true;
    r.time_s = end - start;
    r.root = {after.bytes_received - before.bytes_received, after.bytes_sent - before.bytes_sent,
              after.frames_received - before.frames_received,
              after.frames_sent - before.frames_sent};
    before = after;
  }
  const Phase stop = kPhaseCount;
  for (auto& ch : children) write_exact(ch.to.get(), &stop, sizeof(stop));
  bool failed = false;
  for (auto& ch : children) {
    int status = 0;
    ::waitpid(ch.pid, &status, 0);
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  store.wait_until_done(Deadline(10));
  if (failed) throw RemoteError("a client process failed");
  result.store_rss_growth_mib =
      static_cast<double>(kib_of("VmHWM:") - std::min(kib_of("VmHWM:"), rss_before_kib)) / 1024.0;
  write_exact(out_fd, &result, sizeof(result));
}

std::vector<int> parse_ints(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p != '\0';) {
    char* end = nullptr;
    out.push_back(static_cast<int>(std::strtol(p, &end, 10)));
    if (end == p) throw UsageError(fmt::format("not a list of integers: {}", text));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

// bytes ~ a n^k between the first and the last size.
double exponent(double n0, double v0, double n1, double v1) {
  if (v0 <= 0 || v1 <= 0 || n1 == n0) return 0;
  return std::log(v1 / v0) / std::log(n1 / n0);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> const char* {
        if (i + 1 >= argc) throw UsageError(fmt::format("{} needs a value", a));
        return argv[++i];
      };
      if (a == "--ranks")
        o.ranks = parse_ints(value());
      else if (a == "--procs")
        o.procs = std::atoi(value());
      else if (a == "--address-bytes")
        o.address_bytes = std::strtoull(value(), nullptr, 10);
      else if (a == "--stats-bytes")
        o.stats_bytes = std::strtoull(value(), nullptr, 10);
      else if (a == "--allgather-up-to")
        o.allgather_up_to = std::atoi(value());
      else
        throw UsageError(
            fmt::format("unknown option {} (see the comment atop bootstrap_scale.cpp)", a));
    }
    // No raise of the open-file limit here: the store raises it as it starts (it warns when
    // even the hard limit is too low), as rank 0 of a real job does, and the client processes,
    // forked after it, inherit it. Before issue 35 this bench raised it itself, which hid that
    // the binary never did.

    std::vector<SizeResult> results;
    for (const int n : o.ranks) {
      int pipe_fds[2];
      if (::pipe(pipe_fds) != 0) throw SystemError("pipe", errno);
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::close(pipe_fds[0]);
        int code = 0;
        try {
          run_size(o, n, pipe_fds[1]);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%d ranks: %s\n", n, e.what());
          code = 1;
        }
        ::_exit(code);
      }
      ::close(pipe_fds[1]);
      SizeResult r;
      const bool ok = read_exact(pipe_fds[0], &r, sizeof(r));
      ::close(pipe_fds[0]);
      int status = 0;
      ::waitpid(pid, &status, 0);
      if (!ok) throw RemoteError(fmt::format("the run of {} ranks failed", n));
      results.push_back(r);
    }

    fmt::print(
        "# bootstrap at scale: real TcpStoreServer, thin-client ranks ({} processes), "
        "{} B addresses, {} B stats, {} ranks per host\n",
        o.procs, o.address_bytes, o.stats_bytes, kRanksPerHost);
    fmt::print("{:>7} {:>9} {:>9} {:>14} {:>14} {:>12} {:>12} {:>16} {:>11}\n", "ranks", "phase",
               "time(ms)", "root_sent(B)", "root_recv(B)", "sent/rank(B)", "root_frames",
               "max_rank_recv(B)", "store_MiB");
    for (const auto& r : results) {
      for (int p = 0; p < kPhaseCount; ++p) {
        const PhaseResult& ph = r.phases[static_cast<std::size_t>(p)];
        if (!ph.ran) continue;
        fmt::print("{:>7} {:>9} {:>9.1f} {:>14} {:>14} {:>12.0f} {:>12} {:>16} {:>11}\n", r.ranks,
                   kPhaseName[static_cast<std::size_t>(p)], ph.time_s * 1e3, ph.root.bytes_sent,
                   ph.root.bytes_received, static_cast<double>(ph.root.bytes_sent) / r.ranks,
                   ph.root.frames_sent + ph.root.frames_received, ph.max_rank_received,
                   p == 0 ? fmt::format("{:.1f}", r.store_rss_growth_mib) : std::string("-"));
      }
    }
    if (results.size() >= 2) {
      const SizeResult& a = results.front();
      const SizeResult& b = results.back();
      fmt::print(
          "\n# growth between {} and {} ranks (value ~ n^k) and the power law taken to "
          "100,000 ranks\n",
          a.ranks, b.ranks);
      fmt::print("{:>9} {:>13} {:>10} {:>20} {:>18}\n", "phase", "k(root_sent)", "k(time)",
                 "root_sent@100k(B)", "time@100k(s)");
      for (int p = 0; p < kPhaseCount; ++p) {
        const PhaseResult& pa = a.phases[static_cast<std::size_t>(p)];
        const PhaseResult& pb = b.phases[static_cast<std::size_t>(p)];
        if (!pa.ran || !pb.ran) continue;
        const double ks = exponent(a.ranks, static_cast<double>(pa.root.bytes_sent), b.ranks,
                                   static_cast<double>(pb.root.bytes_sent));
        const double kt = exponent(a.ranks, pa.time_s, b.ranks, pb.time_s);
        const double scale = 100000.0 / b.ranks;
        fmt::print("{:>9} {:>13.2f} {:>10.2f} {:>20.3g} {:>18.3g}\n",
                   kPhaseName[static_cast<std::size_t>(p)], ks, kt,
                   static_cast<double>(pb.root.bytes_sent) * std::pow(scale, ks),
                   pb.time_s * std::pow(scale, kt));
      }
    }
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ibscope_bench_bootstrap_scale: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibscope_bench_bootstrap_scale: %s\n", e.what());
    return 1;
  }
}
