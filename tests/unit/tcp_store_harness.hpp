#pragma once
// Test harness for the TCP store: ranks as threads of this process, rank 0 on a listening
// socket it is handed (so no port race), and clients of the store played by hand over raw
// sockets (strangers, misbehaving ranks, ranks on another "host"). Shared by the store tests
// and the attack tests.
//
// Catch2 assertions are not thread-safe: rank threads only record what happened; the test
// thread asserts after joining them all.

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/bootstrap/tcp_bootstrap.hpp"
#include "ibscope/bootstrap/tcp_store_server.hpp"
#include "ibscope/bootstrap/wire.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using ibscope::Clock;
using ibscope::Deadline;
using ibscope::RemoteError;
using ibscope::TimeoutError;
using ibscope::bootstrap::Bytes;
using ibscope::bootstrap::TcpBootstrapOptions;
namespace net = ibscope::bootstrap::net;
namespace wire = ibscope::bootstrap::wire;

namespace ibscope::test {

inline const std::string kToken = "unit-test-token-0123456789";
// Failure tests wait for this; every deadline assertion allows it plus a few seconds.
constexpr double kTimeoutS = 2.0;
// Bound on how long a test waits for its own threads to reach a point (failures only).
constexpr double kGateS = 20.0;

// A listening socket on 127.0.0.1 with a kernel-chosen port; rank 0 takes ownership.
struct Root {
  net::Fd listener = net::listen_tcp({"127.0.0.1", 0});
  std::uint16_t port = net::bound_port(listener.get());
};

// Options for every rank of a job of `size` rooted at `root` (rank 0 gets the listener).
inline std::vector<TcpBootstrapOptions> job_options(Root& root, int size,
                                                    double timeout_s = kTimeoutS) {
  std::vector<TcpBootstrapOptions> all(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    auto& o = all[static_cast<std::size_t>(r)];
    o.rank = r;
    o.size = size;
    o.timeout_s = timeout_s;
    o.root = net::HostPort{"127.0.0.1", root.port};
    o.token = kToken;
  }
  all[0].inherited_listen_fd = root.listener.release();
  return all;
}

// What one rank thread saw; written by that thread only, read after join.
struct RankOutcome {
  std::exception_ptr error;
  double elapsed_s = 0;  // from the thread's start to its end or its exception
  int rank = -1, size = -1, local_rank = -1, local_size = -1, host_count = -1;
  std::vector<std::string> hosts;
  std::string kind;
  std::vector<std::string> problems;  // data mismatches, checked by the test thread
  std::string note;                   // free text for a test's own use
};

// Runs body(rank, outcome) for every rank not in `absent`, one thread each, and joins all.
inline std::vector<RankOutcome> run_ranks(int size,
                                          const std::function<void(int, RankOutcome&)>& body,
                                          const std::set<int>& absent = {}) {
  std::vector<RankOutcome> out(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    if (absent.count(r) != 0) continue;
    threads.emplace_back([&, r] {
      RankOutcome& o = out[static_cast<std::size_t>(r)];
      const auto start = Clock::now();
      try {
        body(r, o);
      } catch (...) {
        o.error = std::current_exception();
      }
      o.elapsed_s = ibscope::seconds_between(start, Clock::now());
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

inline void record_identity(const ibscope::bootstrap::Bootstrap& b, RankOutcome& o) {
  o.rank = b.rank();
  o.size = b.size();
  o.local_rank = b.local_rank();
  o.local_size = b.local_size();
  o.host_count = b.host_count();
  o.hosts = b.hosts();
  o.kind = std::string(b.kind());
}

// Fails the test for every rank that threw.
inline void check_no_errors(const std::vector<RankOutcome>& outcomes) {
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    const auto& o = outcomes[r];
    if (!o.error) continue;
    try {
      std::rethrow_exception(o.error);
    } catch (const std::exception& e) {
      FAIL_CHECK("rank " << r << " threw: " << e.what());
    } catch (...) {
      FAIL_CHECK("rank " << r << " threw a non-std exception");
    }
  }
}

// what() of the outcome's error if it is an E; otherwise a marker that names what it was.
template <typename E>
std::string error_of(const RankOutcome& o) {
  if (!o.error) return "<no exception>";
  try {
    std::rethrow_exception(o.error);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<other exception: ") + e.what() + ">";
  } catch (...) {
    return "<non-std exception>";
  }
}

// A rank's contribution to a round: empty, about 1 MiB, or small, in turn, so that every round
// of every job size mixes them. Content depends on round and rank.
inline Bytes payload(int round, int rank) {
  std::size_t n = 0;
  switch ((round + rank) % 3) {
    case 0:
      n = 0;
      break;
    case 1:
      n = (std::size_t{1} << 20) + static_cast<std::size_t>(rank);
      break;
    default:
      n = static_cast<std::size_t>(17 * rank + round + 1);
      break;
  }
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = static_cast<std::byte>(
        (i * 7 + static_cast<std::size_t>(round) * 31 + static_cast<std::size_t>(rank) * 101) &
        0xff);
  }
  return b;
}

inline void check_round(const std::vector<Bytes>& all, int round, int size,
                        std::vector<std::string>& problems) {
  if (all.size() != static_cast<std::size_t>(size)) {
    problems.push_back(fmt::format("round {}: {} blobs for {} ranks", round, all.size(), size));
    return;
  }
  for (int r = 0; r < size; ++r) {
    const Bytes expected = payload(round, r);
    const Bytes& got = all[static_cast<std::size_t>(r)];
    if (got != expected) {
      problems.push_back(fmt::format("round {}: blob of rank {} has {} bytes, expected {}{}", round,
                                     r, got.size(), expected.size(),
                                     got.size() == expected.size() ? " (content differs)" : ""));
    }
  }
}

// A one-shot counter that threads arrive at and others wait on, with a deadline so that a
// failing test cannot hang.
class Gate {
 public:
  void arrive() {
    std::lock_guard lock(mutex_);
    ++count_;
    cv_.notify_all();
  }
  bool wait_for(int n, double timeout_s = kGateS) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                        [&] { return count_ >= n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_ = 0;
};

// A client of the store driven by hand: a stranger, or a rank that misbehaves.
class RawClient {
 public:
  explicit RawClient(std::uint16_t port)
      : fd_(net::connect_tcp({"127.0.0.1", port}, Deadline(5.0), "the test's store")) {}

  void send(const Bytes& frame) { net::write_all(fd_.get(), frame.data(), frame.size()); }
  void send_text(std::string_view s) { net::write_all(fd_.get(), s.data(), s.size()); }
  void hello(const std::string& token, std::uint32_t rank, std::uint32_t size,
             const std::string& host) {
    send(wire::encode(wire::Hello{token, rank, size, host}));
  }

  /// The next frame, or nullopt when the server closed the connection.
  std::optional<std::pair<wire::MsgType, Bytes>> read_frame(double timeout_s = 5.0) {
    const Deadline deadline(timeout_s);
    std::array<std::byte, wire::kHeaderBytes> header{};
    if (!net::read_exact(fd_.get(), header.data(), header.size(), deadline)) return std::nullopt;
    const auto h = wire::decode_header(header, wire::kMaxFrameBytes);
    Bytes payload(h.payload_bytes);
    if (!payload.empty()) net::read_exact(fd_.get(), payload.data(), payload.size(), deadline);
    return std::make_pair(h.type, std::move(payload));
  }

  /// Reads the frame that must come next; throws std::runtime_error if it is another type.
  Bytes expect(wire::MsgType type, double timeout_s = 5.0) {
    auto f = read_frame(timeout_s);
    if (!f) throw std::runtime_error(fmt::format("expected message type {}, got EOF", int(type)));
    if (f->first != type) {
      std::string detail;
      if (f->first == wire::MsgType::kRefused) detail = ": " + wire::decode_refused(f->second);
      if (f->first == wire::MsgType::kAbort) detail = ": " + wire::decode_abort(f->second).reason;
      throw std::runtime_error(
          fmt::format("expected message type {}, got {}{}", int(type), int(f->first), detail));
    }
    return std::move(f->second);
  }

  /// A refusal must arrive, then the server closes: returns the reason.
  std::string expect_refused() {
    const std::string reason = wire::decode_refused(expect(wire::MsgType::kRefused));
    if (read_frame()) throw std::runtime_error("the server kept talking after refusing");
    return reason;
  }

  /// True if the server closes the connection within `timeout_s` without sending anything.
  bool closed_by_server(double timeout_s = 5.0) { return !read_frame(timeout_s).has_value(); }

  void close() { fd_.reset(); }
  bool open() const { return fd_.valid(); }

  /// "127.0.0.1:port" of this end, as the server's log names it.
  std::string local_name() const {
    sockaddr_in sa{};
    socklen_t len = sizeof(sa);
    if (::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0) return "?";
    char ip[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
    return fmt::format("{}:{}", ip, ntohs(sa.sin_port));
  }

 private:
  net::Fd fd_;
};

// A rank played by hand, e.g. to stand on another "host" or to vanish without a goodbye.
class RawRank {
 public:
  RawRank(std::uint16_t port, int rank, int size, std::string host)
      : client_(port), host_(std::move(host)) {
    client_.hello(kToken, static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(size),
                  host_);
    client_.expect(wire::MsgType::kWelcome);
  }

  std::vector<Bytes> allgather(const Bytes& mine, const std::string& what) {
    const std::uint64_t seq = seq_++;
    client_.send(wire::encode(wire::Contrib{seq, wire::RoundMode::kAllgather, what, mine}));
    auto f = await(wire::MsgType::kResult);
    auto r = wire::decode_result(f);
    if (r.seq != seq) throw std::runtime_error("raw rank: result for the wrong round");
    return std::move(r.blobs);
  }

  /// The bootstrap's first round: where the ranks live.
  wire::Layout join_hostname_exchange() {
    const std::uint64_t seq = seq_++;
    client_.send(
        wire::encode(wire::Contrib{seq, wire::RoundMode::kHosts, "hostname exchange", {}}));
    auto l = wire::decode_layout(await(wire::MsgType::kLayout));
    if (l.seq != seq) throw std::runtime_error("raw rank: layout for the wrong round");
    return l;
  }

  /// The payload of the next frame of `type`, skipping others; an abort is thrown.
  Bytes await(wire::MsgType type) {
    while (true) {
      auto f = client_.read_frame(kGateS);
      if (!f) throw RemoteError("raw rank: the store closed the connection");
      if (f->first == wire::MsgType::kAbort) {
        throw RemoteError(wire::decode_abort(f->second).reason);
      }
      if (f->first == type) return std::move(f->second);
    }
  }

  void bye() { client_.send(wire::encode_empty(wire::MsgType::kBye)); }
  void crash() { client_.close(); }

 private:
  RawClient client_;
  std::string host_;
  std::uint64_t seq_ = 0;
};

inline Bytes bytes_of(const std::string& s) {
  return Bytes(reinterpret_cast<const std::byte*>(s.data()),
               reinterpret_cast<const std::byte*>(s.data()) + s.size());
}

}  // namespace ibscope::test
