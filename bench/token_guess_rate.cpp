// How fast can a stranger guess the job token (issue 35)? The store is the real one
// (TcpStoreServer, as rank 0 runs it, with its default limits); guesser threads connect, send a
// hello with a wrong token, read the answer and start again, as fast as the store lets them.
// A verdict ("wrong job token") is one try at the token; a "server busy" answer (refused
// without looking at the token) is not. Each guesser connects from its own loopback address,
// 127.0.0.(2 + i % --sources), so that --sources 1 is one attacking host and more are several.
//
//   build/release/bench/ibscope_bench_token_guess_rate [--guessers 4] [--sources 1] [--seconds 5]

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/bootstrap/tcp_store_server.hpp"
#include "ibscope/bootstrap/wire.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"

namespace {

using namespace ibscope;
namespace wire = bootstrap::wire;
namespace net = bootstrap::net;

struct Options {
  int guessers = 4;
  int sources = 1;
  double seconds = 5;
};

struct Counts {
  std::atomic<std::uint64_t> verdicts{0};  // "wrong job token": one try at the token
  std::atomic<std::uint64_t> busy{0};      // refused before the token was looked at
  std::atomic<std::uint64_t> other{0};     // closed without an answer, connect failures
};

// One try from `source`: the store's refusal, or "" when it closed without one.
std::string guess(std::uint16_t port, const std::string& source, std::uint64_t n) {
  net::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) throw SystemError("socket", errno);
  sockaddr_in me{};
  me.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &me.sin_addr);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&me), sizeof(me)) != 0)
    throw SystemError(fmt::format("bind {}", source), errno);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) return "";
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // Close with a reset, not a FIN: tens of thousands of TIME_WAIT sockets would use up the
  // source's ports within a run.
  const linger hard{1, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
  const auto hello = wire::encode(wire::Hello{fmt::format("guess-{:016x}", n), 1, 2, "guesser"});
  net::write_all(fd.get(), hello.data(), hello.size());
  std::array<std::byte, wire::kHeaderBytes> header{};
  const Deadline deadline(5.0);
  if (!net::read_exact(fd.get(), header.data(), header.size(), deadline)) return "";
  const auto h = wire::decode_header(header, wire::kMaxPreAuthFrameBytes);
  bootstrap::Bytes payload(h.payload_bytes);
  if (!payload.empty()) net::read_exact(fd.get(), payload.data(), payload.size(), deadline);
  return h.type == wire::MsgType::kRefused ? wire::decode_refused(payload) : "";
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
      if (a == "--guessers")
        o.guessers = std::atoi(value());
      else if (a == "--sources")
        o.sources = std::atoi(value());
      else if (a == "--seconds")
        o.seconds = std::atof(value());
      else
        throw UsageError(
            fmt::format("unknown option {} (see the comment atop token_guess_rate.cpp)", a));
    }
    if (o.guessers < 1 || o.sources < 1 || o.sources > 250 || o.seconds <= 0)
      throw UsageError("--guessers >= 1, --sources 1..250, --seconds > 0");

    net::Fd listener = net::listen_tcp({"127.0.0.1", 0}, 4096);
    const std::uint16_t port = net::bound_port(listener.get());
    bootstrap::TcpStoreServer store(std::move(listener), 2, "the-real-token", 60);

    Counts counts;
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    const auto start = Clock::now();
    for (int g = 0; g < o.guessers; ++g) {
      threads.emplace_back([&, g] {
        const std::string source = fmt::format("127.0.0.{}", 2 + g % o.sources);
        for (std::uint64_t n = static_cast<std::uint64_t>(g) << 40; !stop.load(); ++n) {
          try {
            const std::string answer = guess(port, source, n);
            if (answer == "wrong job token")
              ++counts.verdicts;
            else if (answer.starts_with(wire::kBusyRefusalPrefix))
              ++counts.busy;
            else
              ++counts.other;
          } catch (const std::exception&) {
            ++counts.other;
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    stop.store(true);
    for (auto& t : threads) t.join();
    const double elapsed = seconds_between(start, Clock::now());
    const auto v = static_cast<double>(counts.verdicts.load());
    const auto b = static_cast<double>(counts.busy.load());
    const auto x = static_cast<double>(counts.other.load());
    fmt::print(
        "# wrong-token hellos against the real store: {} guessers from {} source address(es), "
        "{:.1f} s\n",
        o.guessers, o.sources, elapsed);
    fmt::print("{:>12} {:>12} {:>12} {:>14} {:>16}\n", "verdicts", "busy", "other", "verdicts/s",
               "connections/s");
    fmt::print("{:>12.0f} {:>12.0f} {:>12.0f} {:>14.1f} {:>16.0f}\n", v, b, x, v / elapsed,
               (v + b + x) / elapsed);
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ibscope_bench_token_guess_rate: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibscope_bench_token_guess_rate: %s\n", e.what());
    return 1;
  }
}
