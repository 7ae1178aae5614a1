// The TCP store bootstrap with ranks as threads of this process (gloo's base_test style): every
// rank connects to 127.0.0.1:<free port>, rank 0 serves the store on a listening socket it is
// handed (so no port race). Failures are injected by ranks that never start, present the wrong
// token, or are played by hand over a raw socket (to crash, or to emulate another host).
//
// Catch2 assertions are not thread-safe: rank threads only record what happened; the test
// thread asserts after joining them all.

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <array>
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
using ibscope::Bytes;
using ibscope::Clock;
using ibscope::Deadline;
using ibscope::RemoteError;
using ibscope::TcpBootstrapOptions;
using ibscope::TimeoutError;
namespace net = ibscope::net;
namespace wire = ibscope::wire;

namespace {

const std::string kToken = "unit-test-token-0123456789";
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
std::vector<TcpBootstrapOptions> job_options(Root& root, int size, double timeout_s = kTimeoutS) {
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
  int rank = -1, size = -1, local_rank = -1, local_size = -1;
  std::vector<std::string> hosts;
  std::string kind;
  std::vector<std::string> problems;  // data mismatches, checked by the test thread
  std::string note;                   // free text for a test's own use
};

// Runs body(rank, outcome) for every rank not in `absent`, one thread each, and joins all.
std::vector<RankOutcome> run_ranks(int size,
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

void record_identity(const ibscope::Bootstrap& b, RankOutcome& o) {
  o.rank = b.rank();
  o.size = b.size();
  o.local_rank = b.local_rank();
  o.local_size = b.local_size();
  o.hosts = b.hosts();
  o.kind = std::string(b.kind());
}

// Fails the test for every rank that threw.
void check_no_errors(const std::vector<RankOutcome>& outcomes) {
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
Bytes payload(int round, int rank) {
  std::size_t n = 0;
  switch ((round + rank) % 3) {
    case 0: n = 0; break;
    case 1: n = (std::size_t{1} << 20) + static_cast<std::size_t>(rank); break;
    default: n = static_cast<std::size_t>(17 * rank + round + 1); break;
  }
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) {
    b[i] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(round) * 31 +
                                   static_cast<std::size_t>(rank) * 101) &
                                  0xff);
  }
  return b;
}

void check_round(const std::vector<Bytes>& all, int round, int size,
                 std::vector<std::string>& problems) {
  if (all.size() != static_cast<std::size_t>(size)) {
    problems.push_back(fmt::format("round {}: {} blobs for {} ranks", round, all.size(), size));
    return;
  }
  for (int r = 0; r < size; ++r) {
    const Bytes expected = payload(round, r);
    const Bytes& got = all[static_cast<std::size_t>(r)];
    if (got != expected) {
      problems.push_back(fmt::format("round {}: blob of rank {} has {} bytes, expected {}{}",
                                     round, r, got.size(), expected.size(),
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
      throw std::runtime_error(fmt::format("expected message type {}, got {}{}", int(type),
                                           int(f->first), detail));
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
    client_.send(wire::encode(wire::Contrib{seq, what, mine}));
    while (true) {
      auto f = client_.read_frame(kGateS);
      if (!f) throw RemoteError("raw rank: the store closed the connection");
      if (f->first == wire::MsgType::kAbort) {
        throw RemoteError(wire::decode_abort(f->second).reason);
      }
      if (f->first != wire::MsgType::kResult) continue;
      auto r = wire::decode_result(f->second);
      if (r.seq != seq) throw std::runtime_error("raw rank: result for the wrong round");
      return std::move(r.blobs);
    }
  }

  void join_hostname_exchange() {
    const Bytes mine(reinterpret_cast<const std::byte*>(host_.data()),
                     reinterpret_cast<const std::byte*>(host_.data()) + host_.size());
    (void)allgather(mine, "hostname exchange");
  }

  void bye() { client_.send(wire::encode_empty(wire::MsgType::kBye)); }
  void crash() { client_.close(); }

 private:
  RawClient client_;
  std::string host_;
  std::uint64_t seq_ = 0;
};

Bytes bytes_of(const std::string& s) {
  return Bytes(reinterpret_cast<const std::byte*>(s.data()),
               reinterpret_cast<const std::byte*>(s.data()) + s.size());
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("tcp bootstrap: jobs of 1, 2, 3 and 5 ranks gather in rank order", "[tcp_store]") {
  const int size = GENERATE(1, 2, 3, 5);
  constexpr int kRounds = 6;
  INFO("job size " << size);
  Root root;
  const auto opts = job_options(root, size, 10.0);
  const auto outcomes = run_ranks(size, [&](int rank, RankOutcome& o) {
    auto b = ibscope::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
    for (int round = 0; round < kRounds; ++round) {
      check_round(b->allgather(payload(round, rank), fmt::format("round {}", round)), round, size,
                  o.problems);
      if (round == 2) b->barrier("mid-job barrier");
      b->check_health();
    }
    b->barrier("final barrier");
  });
  check_no_errors(outcomes);
  const std::vector<std::string> hosts(static_cast<std::size_t>(size), ibscope::local_hostname());
  for (int r = 0; r < size; ++r) {
    const auto& o = outcomes[static_cast<std::size_t>(r)];
    INFO("rank " << r);
    CHECK(o.kind == "tcp");
    CHECK(o.rank == r);
    CHECK(o.size == size);
    // Every rank is a thread on this host.
    CHECK(o.local_rank == r);
    CHECK(o.local_size == size);
    CHECK(o.hosts == hosts);
    CHECK(o.problems == std::vector<std::string>{});
  }
}

TEST_CASE("tcp bootstrap: local rank and size follow the hosts", "[tcp_store]") {
  // Ranks 1 and 3 are played by hand and claim to run on "nodeB".
  constexpr int kSize = 4;
  constexpr int kRounds = 3;
  Root root;
  const std::uint16_t port = root.port;
  const auto opts = job_options(root, kSize, 10.0);
  const auto outcomes = run_ranks(kSize, [&](int rank, RankOutcome& o) {
    if (rank % 2 == 1) {
      RawRank raw(port, rank, kSize, "nodeB");
      raw.join_hostname_exchange();
      for (int round = 0; round < kRounds; ++round) {
        check_round(raw.allgather(payload(round, rank), fmt::format("round {}", round)), round,
                    kSize, o.problems);
      }
      raw.bye();
      return;
    }
    auto b = ibscope::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
    o.note = b->describe(3);
    for (int round = 0; round < kRounds; ++round) {
      check_round(b->allgather(payload(round, rank), fmt::format("round {}", round)), round,
                  kSize, o.problems);
    }
  });
  check_no_errors(outcomes);
  const std::string me = ibscope::local_hostname();
  REQUIRE(me != "nodeB");
  const std::vector<std::string> hosts = {me, "nodeB", me, "nodeB"};
  for (int r = 0; r < kSize; ++r) {
    INFO("rank " << r);
    CHECK(outcomes[static_cast<std::size_t>(r)].problems == std::vector<std::string>{});
  }
  CHECK(outcomes[0].hosts == hosts);
  CHECK(outcomes[2].hosts == hosts);
  CHECK(outcomes[0].local_rank == 0);
  CHECK(outcomes[0].local_size == 2);
  CHECK(outcomes[2].local_rank == 1);
  CHECK(outcomes[2].local_size == 2);
  CHECK(outcomes[2].note == "rank 3 (nodeB)");
}

TEST_CASE("tcp bootstrap: results larger than the socket buffers", "[tcp_store]") {
  // 16 MiB results: the store must block on a full socket, not give up on the rank (it used to
  // write with non-blocking sockets and drop every rank on EAGAIN from 4 MiB on).
  constexpr int kSize = 4;
  constexpr std::size_t kBytes = std::size_t{4} << 20;
  Root root;
  const auto opts = job_options(root, kSize, 10.0);
  const auto outcomes = run_ranks(kSize, [&](int rank, RankOutcome& o) {
    auto b = ibscope::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    for (int round = 0; round < 2; ++round) {
      const Bytes mine(kBytes, static_cast<std::byte>(rank * 16 + round));
      const auto all = b->allgather(mine, "large");
      for (int r = 0; r < kSize; ++r) {
        if (all.at(static_cast<std::size_t>(r)) !=
            Bytes(kBytes, static_cast<std::byte>(r * 16 + round))) {
          o.problems.push_back(fmt::format("round {}: blob of rank {} differs", round, r));
        }
      }
    }
  });
  check_no_errors(outcomes);
  for (const auto& o : outcomes) CHECK(o.problems == std::vector<std::string>{});
}

TEST_CASE("tcp bootstrap: a rank with the wrong token is refused, the others time out",
          "[tcp_store]") {
  constexpr int kSize = 3;
  constexpr int kIntruder = 2;
  Root root;
  auto opts = job_options(root, kSize);
  opts[kIntruder].token = "not-the-token";
  const auto outcomes = run_ranks(kSize, [&](int rank, RankOutcome& o) {
    auto b = ibscope::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
  });
  const std::string refused = error_of<RemoteError>(outcomes[kIntruder]);
  CHECK_THAT(refused, Contains("token") && Contains("refused rank 2"));
  CHECK(outcomes[kIntruder].elapsed_s < 2.0);
  for (int r : {0, 1}) {
    INFO("rank " << r);
    const auto& o = outcomes[static_cast<std::size_t>(r)];
    CHECK_THAT(error_of<TimeoutError>(o), Contains("rank 2 (never connected)") &&
                                              Contains("hostname exchange"));
    CHECK_THAT(error_of<TimeoutError>(o), !Contains("rank 1") && !Contains("rank 0"));
    CHECK(o.elapsed_s < kTimeoutS + 3.0);
  }
}

TEST_CASE("tcp bootstrap: a rank that never starts is named when the others time out",
          "[tcp_store]") {
  constexpr int kSize = 4;
  Root root;
  const auto opts = job_options(root, kSize);
  const auto outcomes = run_ranks(
      kSize,
      [&](int rank, RankOutcome& o) {
        auto b = ibscope::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
        record_identity(*b, o);
      },
      /*absent=*/{3});
  for (int r : {0, 1, 2}) {
    INFO("rank " << r);
    const auto& o = outcomes[static_cast<std::size_t>(r)];
    CHECK_THAT(error_of<TimeoutError>(o),
               Contains("rank 3 (never connected) never arrived") && Contains("timed out"));
    CHECK(o.elapsed_s >= kTimeoutS - 0.05);
    CHECK(o.elapsed_s < kTimeoutS + 3.0);
  }
}

TEST_CASE("tcp bootstrap: without rank 0 the others time out naming the root", "[tcp_store]") {
  std::uint16_t port = 0;
  {
    Root probe;  // a port that was free a moment ago; nothing listens on it now
    port = probe.port;
  }
  constexpr int kSize = 3;
  const auto outcomes = run_ranks(
      kSize,
      [&](int rank, RankOutcome&) {
        TcpBootstrapOptions o;
        o.rank = rank;
        o.size = kSize;
        o.timeout_s = kTimeoutS;
        o.root = net::HostPort{"127.0.0.1", port};
        o.token = kToken;
        (void)ibscope::make_tcp_bootstrap(o);
      },
      /*absent=*/{0});
  for (int r : {1, 2}) {
    INFO("rank " << r);
    const auto& o = outcomes[static_cast<std::size_t>(r)];
    CHECK_THAT(error_of<TimeoutError>(o), Contains("rank 0") && Contains(std::to_string(port)));
    CHECK(o.elapsed_s < kTimeoutS + 3.0);
  }
}

TEST_CASE("tcp bootstrap: a rank that crashes mid-job is named by the others", "[tcp_store]") {
  // Rank 2 joins by hand, takes part in the hostname exchange, then drops its connection
  // without a goodbye while ranks 0 and 1 wait in the next allgather.
  constexpr int kSize = 3;
  constexpr int kCrasher = 2;
  Root root;
  const std::uint16_t port = root.port;
  const auto opts = job_options(root, kSize);
  Gate joined;
  const auto outcomes = run_ranks(kSize, [&](int rank, RankOutcome& o) {
    if (rank == kCrasher) {
      RawRank raw(port, rank, kSize, "crashhost");
      raw.join_hostname_exchange();
      // Until both real ranks have their Bootstrap, a crash would fail their constructor instead.
      if (!joined.wait_for(kSize - 1)) throw std::runtime_error("the real ranks never joined");
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      raw.crash();
      return;
    }
    std::unique_ptr<ibscope::Bootstrap> b;
    try {
      b = ibscope::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    } catch (...) {
      joined.arrive();
      throw;
    }
    joined.arrive();
    record_identity(*b, o);
    const auto start = Clock::now();
    try {
      (void)b->allgather(payload(1, rank), "after the crash");
    } catch (const RemoteError& e) {
      o.note = fmt::format("{:.3f}", ibscope::seconds_between(start, Clock::now()));
      // Later calls fail the same way, at once.
      try {
        b->check_health();
      } catch (const RemoteError&) {
        o.note += " health";
      }
      throw;
    }
  });
  REQUIRE_FALSE(outcomes[kCrasher].error);
  for (int r : {0, 1}) {
    INFO("rank " << r);
    const auto& o = outcomes[static_cast<std::size_t>(r)];
    const std::string me = ibscope::local_hostname();
    CHECK(o.hosts == std::vector<std::string>{me, me, "crashhost"});
    CHECK_THAT(error_of<RemoteError>(o),
               Contains("rank 2 (crashhost) exited or crashed") && !Contains("rank 0 ("));
    CHECK_THAT(o.note, Contains(" health"));
    // Noticed at once, not at the timeout.
    CHECK(std::stod(o.note.empty() ? "99" : o.note) < 1.5);
  }
}

TEST_CASE("tcp bootstrap: a rank that leaves early is named by the others", "[tcp_store]") {
  // Rank 1 finishes cleanly (its destructor says goodbye) while the others start another round.
  constexpr int kSize = 3;
  Root root;
  const auto opts = job_options(root, kSize);
  const auto outcomes = run_ranks(kSize, [&](int rank, RankOutcome& o) {
    auto b = ibscope::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
    check_round(b->allgather(payload(0, rank), "round 0"), 0, kSize, o.problems);
    if (rank == 1) return;
    (void)b->allgather(payload(1, rank), "round 1");
  });
  REQUIRE_FALSE(outcomes[1].error);
  for (int r : {0, 2}) {
    INFO("rank " << r);
    const auto& o = outcomes[static_cast<std::size_t>(r)];
    CHECK(o.problems == std::vector<std::string>{});
    // A timeout naming the missing rank (an immediate RemoteError would be fine too).
    std::string msg = error_of<ibscope::Error>(o);
    CHECK_THAT(msg, Contains("rank 1 (") && Contains("round 1"));
    CHECK(o.elapsed_s < kTimeoutS + 3.0);
  }
}

TEST_CASE("tcp bootstrap: abort_job stops the other ranks with the reason", "[tcp_store]") {
  constexpr int kSize = 3;
  Root root;
  const auto opts = job_options(root, kSize);
  const auto outcomes = run_ranks(kSize, [&](int rank, RankOutcome& o) {
    auto b = ibscope::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
    if (rank == 1) {
      b->abort_job("GPU 3 fell off the bus");
      return;
    }
    (void)b->allgather(payload(0, rank), "after the abort");
  });
  REQUIRE_FALSE(outcomes[1].error);
  for (int r : {0, 2}) {
    INFO("rank " << r);
    CHECK_THAT(error_of<RemoteError>(outcomes[static_cast<std::size_t>(r)]),
               Contains("rank 1 (") && Contains("aborted: GPU 3 fell off the bus"));
    CHECK(outcomes[static_cast<std::size_t>(r)].elapsed_s < kTimeoutS);
  }
}

TEST_CASE("tcp bootstrap: strangers and garbage do not disturb a job", "[tcp_store]") {
  constexpr int kSize = 3;
  constexpr int kRounds = 4;
  Root root;
  const std::uint16_t port = root.port;
  const auto opts = job_options(root, kSize, 3.0);

  // Each stranger connects, misbehaves once and must get a refusal naming why.
  struct Stranger {
    const char* name;
    std::function<void(RawClient&)> act;
    const char* refusal;  // nullptr: the connection is simply closed by the stranger
  };
  const std::vector<Stranger> before_job = {
      {"HTTP request", [](RawClient& c) { c.send_text("GET / HTTP/1.1\r\nHost: x\r\n\r\n"); },
       "frame length"},
      {"wrong token", [](RawClient& c) { c.hello("wrong-token-0123456789xyz", 1, kSize, "evil"); },
       "wrong job token"},
      {"token prefix", [](RawClient& c) { c.hello(kToken.substr(0, 5), 1, kSize, "evil"); },
       "wrong job token"},
      {"empty token", [](RawClient& c) { c.hello("", 1, kSize, "evil"); }, "wrong job token"},
      {"wrong job size", [](RawClient& c) { c.hello(kToken, 1, 7, "evil"); },
       "job size 7 does not match this job's 3"},
      {"rank out of range", [](RawClient& c) { c.hello(kToken, 3, kSize, "evil"); },
       "rank 3 out of range"},
      {"contribution before hello",
       [](RawClient& c) { c.send(wire::encode(wire::Contrib{0, "hostname exchange", {}})); },
       "first message was not a hello"},
      {"oversized pre-auth frame",
       [](RawClient& c) { c.send_text(std::string("\x00\x00\x01\x00\x01", 5)); },
       "frame length 65536 outside 1..4096"},
      {"malformed hello",
       [](RawClient& c) { c.send_text(std::string("\x03\x00\x00\x00\x01\xff\xff", 7)); },
       "truncated hello"},
      {"unknown type", [](RawClient& c) { c.send_text(std::string("\x01\x00\x00\x00\x63", 5)); },
       "unknown message type 99"},
      {"connect and leave", [](RawClient& c) { c.close(); }, nullptr},
  };
  std::vector<Stranger> during_job = before_job;
  during_job.push_back({"a rank that is already connected",
                        [](RawClient& c) { c.hello(kToken, 1, kSize, "impostor"); },
                        "rank 1 is already connected"});
  during_job.push_back({"rank 0 again", [](RawClient& c) { c.hello(kToken, 0, kSize, "x"); },
                        "rank 0 is already connected"});

  // Returns one line per stranger: "name: refusal reason" (or what went wrong instead).
  auto visit = [&](const std::vector<Stranger>& strangers) {
    std::vector<std::string> seen;
    for (const auto& s : strangers) {
      try {
        RawClient c(port);
        s.act(c);
        seen.push_back(fmt::format("{}: {}", s.name, s.refusal ? c.expect_refused() : "-"));
      } catch (const std::exception& e) {
        seen.push_back(fmt::format("{}: <{}>", s.name, e.what()));
      }
    }
    return seen;
  };

  Gate server_up, job_started, strangers_done;
  std::vector<std::string> seen_before, seen_during;
  std::optional<RawClient> silent;  // connects mid-job and never says anything
  const auto outcomes = run_ranks(kSize + 1, [&](int rank, RankOutcome& o) {
    if (rank == kSize) {
      // The test's own thread of strangers. First, while only rank 0 is up.
      if (!server_up.wait_for(1)) throw std::runtime_error("rank 0 never started");
      seen_before = visit(before_job);
      strangers_done.arrive();  // lets ranks 1 and 2 start
      // Then between two rounds of the running job.
      if (!job_started.wait_for(kSize)) throw std::runtime_error("the job never started");
      silent.emplace(port);
      seen_during = visit(during_job);
      strangers_done.arrive();
      return;
    }
    if (rank == 0) server_up.arrive();
    if (rank != 0 && !strangers_done.wait_for(1)) throw std::runtime_error("no go");
    auto b = ibscope::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
    for (int round = 0; round < kRounds; ++round) {
      check_round(b->allgather(payload(round, rank), fmt::format("round {}", round)), round,
                  kSize, o.problems);
      if (round == 0) {
        job_started.arrive();
        if (!strangers_done.wait_for(2)) throw std::runtime_error("strangers never finished");
      }
    }
    b->barrier("done");
  });
  silent.reset();
  check_no_errors(outcomes);
  for (int r = 0; r < kSize; ++r) {
    INFO("rank " << r);
    CHECK(outcomes[static_cast<std::size_t>(r)].problems == std::vector<std::string>{});
    CHECK(outcomes[static_cast<std::size_t>(r)].size == kSize);
  }
  REQUIRE(seen_before.size() == before_job.size());
  REQUIRE(seen_during.size() == during_job.size());
  auto check_seen = [](const std::vector<Stranger>& strangers,
                       const std::vector<std::string>& seen) {
    for (std::size_t i = 0; i < strangers.size(); ++i) {
      const std::string name = strangers[i].name;
      if (strangers[i].refusal == nullptr) {
        CHECK(seen[i] == name + ": -");
      } else {
        CHECK_THAT(seen[i], StartsWith(name + ": ") && Contains(strangers[i].refusal) &&
                                !Contains("<"));
      }
    }
  };
  check_seen(before_job, seen_before);
  check_seen(during_job, seen_during);
}

// ---------------------------------------------------------------------------------------------
// The store server on its own, every client played by hand.

namespace {

struct ServerFixture {
  explicit ServerFixture(int size, double timeout_s = kTimeoutS) {
    Root root;
    port = root.port;
    server = std::make_unique<ibscope::TcpStoreServer>(std::move(root.listener), size, kToken,
                                                       timeout_s);
  }
  std::uint16_t port = 0;
  std::unique_ptr<ibscope::TcpStoreServer> server;
};

}  // namespace

TEST_CASE("tcp store server: rounds, refusals and goodbyes", "[tcp_store]") {
  ServerFixture f(2);
  CHECK(f.server->port() == f.port);
  CHECK(f.server->refused_count() == 0);
  {
    RawClient stranger(f.port);
    stranger.send_text("\x7f\x45\x4c\x46garbage");
    CHECK_THAT(stranger.expect_refused(), Contains("bootstrap protocol"));
  }
  CHECK(f.server->refused_count() == 1);
  {
    RawClient stranger(f.port);
    stranger.hello("guess", 0, 2, "evil");
    CHECK(stranger.expect_refused() == "wrong job token");
  }
  CHECK(f.server->refused_count() == 2);

  RawClient r0(f.port), r1(f.port);
  r1.hello(kToken, 1, 2, "beta");  // the order of arrival does not matter
  r0.hello(kToken, 0, 2, "alpha");
  r0.expect(wire::MsgType::kWelcome);
  r1.expect(wire::MsgType::kWelcome);

  // Two rounds in flight at once, contributed in different orders: one result per round,
  // blobs in rank order.
  r0.send(wire::encode(wire::Contrib{0, "a", bytes_of("zero-a")}));
  r0.send(wire::encode(wire::Contrib{1, "b", bytes_of("zero-b")}));
  r1.send(wire::encode(wire::Contrib{1, "b", bytes_of("one-b")}));
  r1.send(wire::encode(wire::Contrib{0, "a", {}}));
  for (RawClient* c : {&r0, &r1}) {
    std::map<std::uint64_t, std::vector<Bytes>> results;
    for (int i = 0; i < 2; ++i) {
      auto r = wire::decode_result(c->expect(wire::MsgType::kResult));
      results[r.seq] = std::move(r.blobs);
    }
    CHECK(results == std::map<std::uint64_t, std::vector<Bytes>>{
                         {0, {bytes_of("zero-a"), Bytes{}}},
                         {1, {bytes_of("zero-b"), bytes_of("one-b")}}});
  }

  {
    RawClient impostor(f.port);
    impostor.hello(kToken, 1, 2, "gamma");
    CHECK(impostor.expect_refused() == "rank 1 is already connected");
  }
  CHECK(f.server->refused_count() == 3);

  r0.send(wire::encode_empty(wire::MsgType::kBye));
  r1.send(wire::encode_empty(wire::MsgType::kBye));
  r0.close();
  r1.close();
  const auto start = Clock::now();
  f.server->wait_until_done(Deadline(5.0));
  CHECK(ibscope::seconds_between(start, Clock::now()) < 1.0);

  // A rank that said goodbye cannot come back.
  RawClient again(f.port);
  again.hello(kToken, 0, 2, "alpha");
  CHECK(again.expect_refused() == "rank 0 is already connected");
}

TEST_CASE("tcp store server: a round timeout names every missing rank, late joiners learn it",
          "[tcp_store]") {
  constexpr double kShortS = 1.0;
  ServerFixture f(3, kShortS);
  RawClient r0(f.port), r1(f.port);
  r0.hello(kToken, 0, 3, "alpha");
  r1.hello(kToken, 1, 3, "beta");
  r0.expect(wire::MsgType::kWelcome);
  r1.expect(wire::MsgType::kWelcome);
  const auto start = Clock::now();
  r0.send(wire::encode(wire::Contrib{0, "phase one", bytes_of("x")}));
  for (RawClient* c : {&r0, &r1}) {
    const auto abort = wire::decode_abort(c->expect(wire::MsgType::kAbort, kShortS + 3.0));
    CHECK(abort.kind == wire::AbortKind::kTimeout);
    CHECK_THAT(abort.reason, Contains("bootstrap 'phase one' timed out after 1 s") &&
                                 Contains("rank 1 (beta), rank 2 (never connected) never arrived"));
  }
  const double elapsed = ibscope::seconds_between(start, Clock::now());
  CHECK(elapsed >= kShortS);
  CHECK(elapsed < kShortS + 1.0);

  // A rank that arrives after the job failed is welcomed and told at once.
  RawClient late(f.port);
  late.hello(kToken, 2, 3, "gamma");
  late.expect(wire::MsgType::kWelcome);
  const auto abort = wire::decode_abort(late.expect(wire::MsgType::kAbort, 1.0));
  CHECK(abort.kind == wire::AbortKind::kTimeout);
  CHECK_THAT(abort.reason, Contains("rank 2 (never connected)"));

  // After an abort, ranks that are gone count as done.
  late.close();
  r0.close();
  r1.close();
  const auto t = Clock::now();
  f.server->wait_until_done(Deadline(5.0));
  CHECK(ibscope::seconds_between(t, Clock::now()) < 1.0);
}

TEST_CASE("tcp store server: a rank that breaks the protocol fails the job", "[tcp_store]") {
  ServerFixture f(2);
  RawClient r0(f.port), r1(f.port);
  r0.hello(kToken, 0, 2, "alpha");
  r1.hello(kToken, 1, 2, "beta");
  r0.expect(wire::MsgType::kWelcome);
  r1.expect(wire::MsgType::kWelcome);

  std::string expected;
  SECTION("a message type a rank must not send") {
    r1.send(wire::encode_empty(wire::MsgType::kWelcome));
    expected = "rank 1 (beta) sent a malformed bootstrap message: unexpected message type 2";
  }
  SECTION("a duplicate contribution") {
    r1.send(wire::encode(wire::Contrib{0, "a", {}}));
    r1.send(wire::encode(wire::Contrib{0, "a", {}}));
    expected = "rank 1 (beta) sent a malformed bootstrap message";
  }
  SECTION("a malformed contribution") {
    r1.send_text(std::string("\x02\x00\x00\x00\x04\x00", 6));
    expected = "truncated contribution";
  }
  SECTION("ranks in different phases") {
    r0.send(wire::encode(wire::Contrib{0, "warm-up", {}}));
    r1.send(wire::encode(wire::Contrib{0, "measure", {}}));
    // Which of the two is named depends on which the server read first.
    expected = "ranks disagree about the bootstrap phase (round 0)";
  }
  SECTION("a rank aborts") {
    r1.send(wire::encode(wire::Abort{wire::AbortKind::kRemote, "out of memory"}));
    expected = "rank 1 (beta) aborted: out of memory";
  }
  SECTION("a rank's connection drops") {
    r1.close();
    expected = "rank 1 (beta) exited or crashed";
  }
  const auto abort = wire::decode_abort(r0.expect(wire::MsgType::kAbort, 3.0));
  CHECK(abort.kind == wire::AbortKind::kRemote);
  CHECK_THAT(abort.reason, Contains(expected));
}

TEST_CASE("net: parse_host_port", "[tcp_store]") {
  const auto hp = net::parse_host_port("node01:29500", "IBSCOPE_ROOT");
  CHECK(hp.host == "node01");
  CHECK(hp.port == 29500);
  CHECK(hp.str() == "node01:29500");
  const auto v6 = net::parse_host_port("[fe80::1]:80", "IBSCOPE_ROOT");
  CHECK(v6.host == "fe80::1");
  CHECK(v6.port == 80);
  CHECK(v6.str() == "[fe80::1]:80");
  CHECK(net::parse_host_port("h:0", "x").port == 0);
  CHECK(net::parse_host_port("h:65535", "x").port == 65535);
  for (const char* bad : {"node01", ":80", "node01:", "node01:65536", "node01:http", "node01:-1",
                          "node01:80x", ""}) {
    INFO("'" << bad << "'");
    try {
      (void)net::parse_host_port(bad, "IBSCOPE_ROOT");
      FAIL_CHECK("accepted");
    } catch (const ibscope::UsageError& e) {
      CHECK_THAT(std::string(e.what()), Contains("IBSCOPE_ROOT") && Contains(bad));
    }
  }
}

TEST_CASE("tcp bootstrap: invalid rank or size is a usage error", "[tcp_store]") {
  TcpBootstrapOptions o;
  o.root = net::HostPort{"127.0.0.1", 1};
  o.token = kToken;
  o.timeout_s = 1;
  for (const auto& [rank, size] : {std::pair{1, 1}, std::pair{-1, 2}, std::pair{0, 0}}) {
    o.rank = rank;
    o.size = size;
    INFO("rank " << rank << " size " << size);
    CHECK_THROWS_AS(ibscope::make_tcp_bootstrap(o), ibscope::UsageError);
  }
}
