// The TCP store under attack (issue 9). Each test runs a real job of ranks as threads that
// gather round after round while an attacker acts on the store's port: a hello without a token
// or with a wrong one, garbage, an oversized length prefix, a connection that stalls or
// trickles one byte a second, a flood of connections. The job must finish with every round
// correct, and the server's log (stderr, captured) must name each refusal with the peer and
// the reason, at most a few lines per kind. Allocation is watched process-wide: no allocation
// may follow a length a peer claims before the length is bounded.

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "../common/text_lines.hpp"
#include "alloc_tracker.hpp"
#include "ibscope/bootstrap/refusal_log.hpp"
#include "tcp_store_harness.hpp"

using namespace ibscope::test;
using ibscope::bootstrap::RefusalKind;
using ibscope::bootstrap::RefusalLog;

namespace {

// Redirects this process's stderr (where log lines go) to a temporary file while alive.
// A file, not a pipe: a flood's log must not block the server on a full pipe.
class StderrCapture {
 public:
  StderrCapture() {
    char path[] = "/tmp/ibscope-attack-log-XXXXXX";
    fd_ = ::mkstemp(path);
    if (fd_ < 0) throw std::runtime_error("mkstemp failed");
    path_ = path;
    saved_ = ::dup(STDERR_FILENO);
    ::dup2(fd_, STDERR_FILENO);
  }
  ~StderrCapture() { (void)stop(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  /// Restores stderr and returns what was written meanwhile.
  std::string stop() {
    if (saved_ >= 0) {
      ::dup2(saved_, STDERR_FILENO);
      ::close(saved_);
      saved_ = -1;
      ::close(fd_);
      std::ifstream in(path_);
      std::stringstream ss;
      ss << in.rdbuf();
      text_ = ss.str();
      ::unlink(path_.c_str());
    }
    return text_;
  }

 private:
  int fd_ = -1, saved_ = -1;
  std::string path_, text_;
};

using ibscope::test::lines_with;

// Sum of N over the summary lines "refused N more connection(s) ...".
int summarised(const std::string& log) {
  static const std::regex re("refused ([0-9]+) more connection");
  int sum = 0;
  for (const auto& line : lines_with(log, " more connection")) {
    std::smatch m;
    if (std::regex_search(line, m, re)) sum += std::stoi(m[1]);
  }
  return sum;
}

// Contributions stay small so that the process-wide allocation watch sees the attack, not the
// job (a round of the store tests' payload() carries 1 MiB).
Bytes small_payload(int round, int rank) {
  Bytes b(static_cast<std::size_t>(8 + (round + rank) % 5));
  for (std::size_t i = 0; i < b.size(); ++i) {
    b[i] = static_cast<std::byte>(
        (i * 13 + static_cast<std::size_t>(round) * 7 + static_cast<std::size_t>(rank) * 3) & 0xff);
  }
  return b;
}

constexpr int kSize = 3;
constexpr int kMinRounds = 20;

// What the attacker's thread may wait for or signal.
struct AttackContext {
  std::uint16_t port = 0;
  Gate job_started;                // every rank finished round 0
  Gate let_ranks_join;             // ranks 1.. connect only after this (when `ranks_wait` is set)
  std::atomic<int> rounds{0};      // rounds rank 0 has completed
  std::vector<std::string> notes;  // the attacker's own findings, checked by the test thread

  // Waits until rank 0 has completed `n` more rounds than now; false after kGateS.
  bool wait_rounds(int n) {
    const int target = rounds.load() + n;
    const Deadline d(kGateS);
    while (rounds.load() < target) {
      if (d.expired()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
};

struct AttackOutcome {
  std::vector<RankOutcome> ranks;
  std::string log;
  std::exception_ptr attacker_error;
  std::vector<std::string> notes;
  std::size_t largest_allocation = 0;
};

struct AttackOptions {
  ibscope::bootstrap::TcpStoreLimits limits{};
  bool ranks_wait = false;  // ranks 1.. join only when the attacker opens let_ranks_join
};

// Runs the job and `attack` side by side. The ranks go on until the attack has returned and at
// least kMinRounds rounds are done; rank 0 decides when to stop and tells the others through
// the store, so every rank runs the same rounds.
AttackOutcome run_job_under_attack(const std::function<void(AttackContext&)>& attack,
                                   AttackOptions options = {}) {
  Root root;
  AttackContext ctx;
  ctx.port = root.port;
  auto opts = job_options(root, kSize, 20.0);
  opts[0].store_limits = options.limits;
  std::atomic<bool> attack_done{false};
  AttackOutcome result;

  StderrCapture capture;
  ProcessAllocationWatch watch;
  std::thread attacker([&] {
    try {
      if (!options.ranks_wait && !ctx.job_started.wait_for(kSize)) {
        throw std::runtime_error("the job never started");
      }
      attack(ctx);
    } catch (...) {
      result.attacker_error = std::current_exception();
    }
    ctx.let_ranks_join.arrive();  // in case the attack failed before letting them in
    attack_done.store(true);
  });
  result.ranks = run_ranks(kSize, [&](int rank, RankOutcome& o) {
    if (rank != 0 && options.ranks_wait && !ctx.let_ranks_join.wait_for(1)) {
      throw std::runtime_error("the attacker never let the ranks join");
    }
    auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
    for (int round = 0;; ++round) {
      const auto all = b->allgather(small_payload(round, rank), fmt::format("round {}", round));
      for (int r = 0; r < kSize; ++r) {
        if (all.at(static_cast<std::size_t>(r)) != small_payload(round, r)) {
          o.problems.push_back(fmt::format("round {}: blob of rank {} differs", round, r));
        }
      }
      if (round == 0) ctx.job_started.arrive();
      if (rank == 0) ctx.rounds.fetch_add(1);
      const bool stop = rank == 0 && attack_done.load() && round + 1 >= kMinRounds;
      const Bytes flag{std::byte{stop ? std::uint8_t{1} : std::uint8_t{0}}};
      if (b->allgather(flag, "go on?").at(0) == Bytes{std::byte{1}}) {
        o.note = std::to_string(round + 1);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    b->barrier("done");
  });
  attacker.join();
  result.largest_allocation = watch.largest();
  result.log = capture.stop();
  result.notes = std::move(ctx.notes);
  return result;
}

// The job finished, every rank saw the same number of correct rounds, the attacker did what it
// meant to.
void check_job_unharmed(const AttackOutcome& a) {
  INFO("log:\n" << a.log);
  check_no_errors(a.ranks);
  if (a.attacker_error) {
    try {
      std::rethrow_exception(a.attacker_error);
    } catch (const std::exception& e) {
      FAIL_CHECK("the attacker failed: " << e.what());
    }
  }
  for (int r = 0; r < kSize; ++r) {
    INFO("rank " << r);
    const auto& o = a.ranks[static_cast<std::size_t>(r)];
    CHECK(o.problems == std::vector<std::string>{});
    CHECK(o.size == kSize);
    CHECK(o.note == a.ranks[0].note);
    CHECK(std::atoi(o.note.c_str()) >= kMinRounds);
  }
}

// The server's log line for a refusal of `client`: "bootstrap: refused <addr>: <reason>".
void check_refusal_logged(const std::string& log, const std::string& client,
                          const std::string& reason) {
  INFO("log:\n" << log);
  const auto lines = lines_with(log, fmt::format("bootstrap: refused {}: ", client));
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Contains(reason) && Contains("warning"));
}

// Reads the refusal the server must send, then its close; the reason, or what happened instead.
std::string refusal_of(RawClient& c) {
  try {
    return c.expect_refused();
  } catch (const std::exception& e) {
    return std::string("<") + e.what() + ">";
  }
}

Bytes raw(std::initializer_list<unsigned> values) {
  Bytes b;
  for (unsigned v : values) b.push_back(static_cast<std::byte>(v));
  return b;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The rate-limited refusal log on its own.

TEST_CASE("refusal log: the first of each kind in full, then counts in summaries",
          "[tcp_store][attack]") {
  std::vector<std::string> lines;
  RefusalLog log(3, 10.0, [&](const std::string& l) { lines.push_back(l); });
  const auto t0 = Clock::now();
  const auto at = [&](double s) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  for (int i = 0; i < 3; ++i) {
    log.refused(RefusalKind::kWrongToken, fmt::format("10.0.0.1:{}", 1000 + i), "wrong job token",
                at(0));
  }
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "bootstrap: refused 10.0.0.1:1000: wrong job token");
  CHECK(lines[2] ==
        "bootstrap: refused 10.0.0.1:1002: wrong job token (further 'wrong token' "
        "refusals are counted, not logged)");
  // Another kind has its own allowance.
  log.refused(RefusalKind::kStalled, "10.0.0.2:5", "no complete hello within 10 s", at(1));
  CHECK(lines.size() == 4);
  // The rest of the wrong tokens are counted only, until the summary interval has passed.
  for (int i = 0; i < 500; ++i) {
    log.refused(RefusalKind::kWrongToken, "10.0.0.1:2000", "wrong job token", at(2));
  }
  log.refused(RefusalKind::kFlood, "10.0.0.3:1", "server busy", at(3));
  CHECK(lines.size() == 5);  // the first flood refusal is logged
  for (int i = 0; i < 3; ++i) log.refused(RefusalKind::kFlood, "10.0.0.3:1", "busy", at(4));
  CHECK(lines.size() == 7);  // the flood's allowance is 3 too
  log.flush(at(9.9));
  CHECK(lines.size() == 7);  // less than 10 s since the first refusal
  log.refused(RefusalKind::kWrongToken, "10.0.0.1:2001", "wrong job token", at(10.5));
  REQUIRE(lines.size() == 8);
  CHECK(lines[7] ==
        "bootstrap: refused 502 more connections not logged one by one (501 wrong "
        "token, 1 flood); 509 refused in all");
  CHECK(log.count(RefusalKind::kFlood) == 4);
  CHECK(log.count(RefusalKind::kWrongToken) == 504);
  CHECK(log.total() == 509);
  log.refused(RefusalKind::kWrongToken, "10.0.0.1:2002", "wrong job token", at(11));
  log.flush(at(12));
  CHECK(lines.size() == 8);  // within the interval of the last summary
  log.flush(at(12), /*force=*/true);
  REQUIRE(lines.size() == 9);
  CHECK(lines[8] ==
        "bootstrap: refused 1 more connection not logged one by one (1 wrong "
        "token); 510 refused in all");
  log.flush(at(30), true);
  CHECK(lines.size() == 9);  // nothing new: no empty summary
}

TEST_CASE("refusal log: several kinds in one summary", "[tcp_store][attack]") {
  std::vector<std::string> lines;
  RefusalLog log(0, 1.0, [&](const std::string& l) { lines.push_back(l); });
  const auto t0 = Clock::now();
  log.refused(RefusalKind::kMalformed, "a:1", "x", t0);
  log.refused(RefusalKind::kFlood, "a:2", "x", t0);
  log.refused(RefusalKind::kFlood, "a:3", "x", t0);
  log.refused(RefusalKind::kNoToken, "a:4", "x", t0);
  CHECK(lines.empty());
  log.flush(t0 + std::chrono::seconds(2));
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "bootstrap: refused 4 more connections not logged one by one (1 no token, "
        "1 malformed, 2 flood); 4 refused in all");
}

// ---------------------------------------------------------------------------------------------
// One attack per test, each during a running job.

TEST_CASE("store under attack: a hello without a token", "[tcp_store][attack]") {
  std::string empty_client, missing_client;
  const auto a = run_job_under_attack([&](AttackContext& ctx) {
    RawClient empty(ctx.port);
    empty_client = empty.local_name();
    empty.hello("", 1, kSize, "evil");
    ctx.notes.push_back("empty token: " + refusal_of(empty));
    // A hello frame without even the token's length field.
    RawClient missing(ctx.port);
    missing_client = missing.local_name();
    missing.send(raw({1, 0, 0, 0, 1}));
    ctx.notes.push_back("no token field: " + refusal_of(missing));
    if (!ctx.wait_rounds(3)) throw std::runtime_error("the job stopped after the attack");
  });
  check_job_unharmed(a);
  CHECK(a.notes ==
        std::vector<std::string>{"empty token: no job token (IBSCOPE_TOKEN unset on the peer?)",
                                 "no token field: bootstrap protocol: truncated hello message"});
  check_refusal_logged(a.log, empty_client, "no job token");
  check_refusal_logged(a.log, missing_client, "truncated hello");
}

TEST_CASE("store under attack: a wrong token", "[tcp_store][attack]") {
  std::vector<std::string> clients;
  const auto a = run_job_under_attack([&](AttackContext& ctx) {
    // Wrong in the first byte, in the last, one byte short, one byte long.
    std::string last = kToken;
    last.back() ^= 1;
    for (const std::string& token : {std::string("X") + kToken.substr(1), last,
                                     kToken.substr(0, kToken.size() - 1), kToken + "0"}) {
      RawClient c(ctx.port);
      clients.push_back(c.local_name());
      c.hello(token, 1, kSize, "evil");
      ctx.notes.push_back(refusal_of(c));
    }
    if (!ctx.wait_rounds(3)) throw std::runtime_error("the job stopped after the attack");
  });
  check_job_unharmed(a);
  CHECK(a.notes == std::vector<std::string>(4, "wrong job token"));
  for (const auto& c : clients) check_refusal_logged(a.log, c, "wrong job token");
  // The token itself never reaches the log.
  CHECK_THAT(a.log, !Contains(kToken.substr(0, 12)));
}

TEST_CASE("store under attack: garbage bytes", "[tcp_store][attack]") {
  std::vector<std::string> clients;
  const auto a = run_job_under_attack([&](AttackContext& ctx) {
    std::uint64_t state = 0x2545f4914f6cdd1dULL;
    for (int i = 0; i < 5; ++i) {
      std::string junk(4096, '\0');
      for (char& ch : junk) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ch = static_cast<char>(state & 0xff);
      }
      RawClient c(ctx.port);
      clients.push_back(c.local_name());
      try {
        c.send_text(junk);  // the server may close before it has all of it
      } catch (const ibscope::SystemError&) {
      }
      ctx.notes.push_back(refusal_of(c));
    }
    if (!ctx.wait_rounds(3)) throw std::runtime_error("the job stopped after the attack");
  });
  check_job_unharmed(a);
  REQUIRE(a.notes.size() == 5);
  for (std::size_t i = 0; i < clients.size(); ++i) {
    INFO("client " << i);
    CHECK_THAT(a.notes[i], StartsWith("bootstrap protocol: ") || StartsWith("first message"));
    check_refusal_logged(a.log, clients[i], a.notes[i]);
  }
}

TEST_CASE("store under attack: an oversized length prefix before authentication",
          "[tcp_store][attack]") {
  std::vector<std::string> clients;
  const auto a = run_job_under_attack([&](AttackContext& ctx) {
    // 4 GiB, 256 MiB (the authenticated bound) and 4097 B (one more than a stranger may send),
    // each followed by a few bytes of the claimed payload, then the connection stays open.
    for (const Bytes& header :
         {raw({0xff, 0xff, 0xff, 0xff, 1}), raw({0, 0, 0, 0x10, 1}), raw({0x01, 0x10, 0, 0, 1})}) {
      RawClient c(ctx.port);
      clients.push_back(c.local_name());
      Bytes frame = header;
      frame.resize(frame.size() + 100, std::byte{'a'});
      c.send(frame);
      ctx.notes.push_back(refusal_of(c));
    }
    if (!ctx.wait_rounds(3)) throw std::runtime_error("the job stopped after the attack");
  });
  check_job_unharmed(a);
  CHECK(a.notes ==
        std::vector<std::string>{"bootstrap protocol: frame length 4294967295 outside 1..4096",
                                 "bootstrap protocol: frame length 268435456 outside 1..4096",
                                 "bootstrap protocol: frame length 4097 outside 1..4096"});
  for (std::size_t i = 0; i < clients.size(); ++i) {
    check_refusal_logged(a.log, clients[i], a.notes[i]);
  }
  // Nothing near a claimed size was allocated anywhere in the process (server, ranks, test).
  CHECK(a.largest_allocation < (std::size_t{1} << 20));
}

TEST_CASE("store under attack: a connection that stalls is closed at the hello deadline",
          "[tcp_store][attack]") {
  AttackOptions options;
  options.limits.hello_deadline_s = 1.0;
  std::string client;
  double closed_after_s = 0;
  int rounds_meanwhile = 0;
  const auto a = run_job_under_attack(
      [&](AttackContext& ctx) {
        RawClient c(ctx.port);
        client = c.local_name();
        const auto start = Clock::now();
        const int before = ctx.rounds.load();
        ctx.notes.push_back(refusal_of(c));
        closed_after_s = ibscope::seconds_between(start, Clock::now());
        rounds_meanwhile = ctx.rounds.load() - before;
        if (!ctx.wait_rounds(3)) throw std::runtime_error("the job stopped after the attack");
      },
      options);
  check_job_unharmed(a);
  CHECK(a.notes == std::vector<std::string>{"no complete hello within 1 s (0 bytes received)"});
  CHECK(closed_after_s >= 0.9);
  CHECK(closed_after_s < 2.5);
  // The job did not wait on the stalled connection.
  CHECK(rounds_meanwhile >= 5);
  check_refusal_logged(a.log, client, "no complete hello within 1 s (0 bytes received)");
}

TEST_CASE("store under attack: a slowloris hello, one byte a second", "[tcp_store][attack]") {
  AttackOptions options;
  options.limits.hello_deadline_s = 2.5;
  std::string client;
  double closed_after_s = 0;
  const auto a = run_job_under_attack(
      [&](AttackContext& ctx) {
        RawClient c(ctx.port);
        client = c.local_name();
        const Bytes hello = wire::encode(wire::Hello{kToken, 1, kSize, "slow"});
        const auto start = Clock::now();
        for (std::size_t i = 0; i < hello.size(); ++i) {
          try {
            c.send(Bytes{hello[i]});
          } catch (const ibscope::SystemError&) {
            break;  // closed by the server
          }
          // Wait a second for the server's answer; nothing is the normal case.
          try {
            if (auto f = c.read_frame(1.0); f && f->first == wire::MsgType::kRefused) {
              ctx.notes.push_back(wire::decode_refused(f->second));
              break;
            }
            break;  // closed without a word
          } catch (const ibscope::TimeoutError&) {
          }
        }
        closed_after_s = ibscope::seconds_between(start, Clock::now());
        if (!ctx.wait_rounds(3)) throw std::runtime_error("the job stopped after the attack");
      },
      options);
  check_job_unharmed(a);
  REQUIRE(a.notes.size() == 1);
  CHECK_THAT(a.notes[0],
             StartsWith("no complete hello within 2.5 s (") && Contains("bytes received)"));
  CHECK(closed_after_s >= 2.4);
  CHECK(closed_after_s < 4.5);
  check_refusal_logged(a.log, client, "no complete hello within 2.5 s");
}

TEST_CASE("store under attack: a flood of 1000 connections does not lock the ranks out",
          "[tcp_store][attack]") {
  // The ranks join in the middle of the flood, while the store holds its maximum of waiting
  // strangers (256): it drops the oldest to admit newcomers, so the ranks get in (connecting
  // again if they were dropped themselves), and the job runs while every attacker connection
  // that was not dropped stays open and silent.
  constexpr int kConnections = 1000;
  // 1000 client ends, up to 256 server ends, and the job's: more than a default soft limit.
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  if (nofile.rlim_cur < 4096 && nofile.rlim_max > nofile.rlim_cur) {
    nofile.rlim_cur = std::min<rlim_t>(nofile.rlim_max, 4096);
    ::setrlimit(RLIMIT_NOFILE, &nofile);
  }
  REQUIRE(nofile.rlim_cur >= 2 * kConnections);
  AttackOptions options;
  options.ranks_wait = true;
  int dropped_seen = 0;
  const auto a = run_job_under_attack(
      [&](AttackContext& ctx) {
        std::vector<std::unique_ptr<RawClient>> flood;
        for (int i = 0; i < kConnections; ++i) {
          flood.push_back(std::make_unique<RawClient>(ctx.port));
          if (i == 300) ctx.let_ranks_join.arrive();
        }
        if (!ctx.job_started.wait_for(kSize)) throw std::runtime_error("no job under the flood");
        if (!ctx.wait_rounds(10)) throw std::runtime_error("the job stalled under the flood");
        // The oldest were dropped with a "server busy" refusal.
        for (auto& c : flood) {
          try {
            if (auto f = c->read_frame(0.0001);
                f && f->first == wire::MsgType::kRefused &&
                wire::decode_refused(f->second).starts_with(wire::kBusyRefusalPrefix)) {
              ++dropped_seen;
            }
          } catch (const std::exception&) {
          }
        }
      },
      options);
  check_job_unharmed(a);
  INFO("log:\n" << a.log.substr(0, 4000));
  CHECK(dropped_seen >= kConnections - 256 - 64);
  // Rate-limited: the first 10 flood refusals in full, the rest in a summary.
  const auto full = lines_with(a.log, "bootstrap: refused 127.0.0.1:");
  CHECK(full.size() <= 10 + 10);  // flood, and stalled ones if the flood outlived 10 s
  CHECK(lines_with(a.log, "server busy: 256 unauthenticated connections waiting").size() == 10);
  CHECK(summarised(a.log) >= kConnections - 256 - 64 - 10);
  CHECK_THAT(a.log, Contains(" flood)") || Contains(" flood,"));
}

TEST_CASE("store under attack: a refusal flood is logged in a few lines", "[tcp_store][attack]") {
  constexpr int kStrangers = 200;
  AttackOptions options;
  options.limits.wrong_token_burst = 1e6;  // every token checked: this test is about the log
  const auto a = run_job_under_attack(
      [&](AttackContext& ctx) {
        for (int i = 0; i < kStrangers; ++i) {
          RawClient c(ctx.port);
          c.hello("guess-" + std::to_string(i), 1, kSize, "evil");
          if (refusal_of(c) != "wrong job token") throw std::runtime_error("not refused");
        }
      },
      options);
  check_job_unharmed(a);
  INFO("log:\n" << a.log);
  CHECK(lines_with(a.log, ": wrong job token").size() == 10);
  CHECK(summarised(a.log) == kStrangers - 10);
  CHECK(lines_with(a.log, "refused in all").size() >= 1);
  CHECK(lines_with(a.log, "bootstrap").size() <= 10 + 3);
}

TEST_CASE("store under attack: a token guesser gets 10 verdicts, then about one a second",
          "[tcp_store][attack]") {
  // Issue 35: one source guessing as fast as the store answers (~5,000 a second before).
  constexpr double kGuessingS = 1.5;
  int verdicts = 0, limited = 0;
  double guessed_s = 0;
  const auto a = run_job_under_attack([&](AttackContext& ctx) {
    const auto start = Clock::now();
    for (int i = 0; ibscope::seconds_between(start, Clock::now()) < kGuessingS; ++i) {
      RawClient c(ctx.port);
      c.hello("guess-" + std::to_string(i), 1, kSize, "evil");
      const std::string answer = refusal_of(c);
      if (answer == "wrong job token") {
        ++verdicts;
      } else if (answer.starts_with("server busy: too many wrong job tokens from 127.0.0.1; it "
                                    "may try again in ")) {
        ++limited;
      } else {
        throw std::runtime_error("unexpected answer: " + answer);
      }
    }
    guessed_s = ibscope::seconds_between(start, Clock::now());
    if (!ctx.wait_rounds(3)) throw std::runtime_error("the job stopped after the attack");
  });
  check_job_unharmed(a);  // its ranks, from the same address, joined before and go on
  INFO("verdicts " << verdicts << ", limited " << limited << " in " << guessed_s << " s");
  CHECK(verdicts >= 10);
  CHECK(verdicts <= 10 + 1 + static_cast<int>(guessed_s));
  CHECK(limited >= 100);                     // answered, but without a look at the token
  CHECK_THAT(a.log, Contains(" guessing"));  // the limited ones are summarised as their kind
}

// ---------------------------------------------------------------------------------------------
// Claimed lengths after authentication, on the server alone and on a client.

TEST_CASE("store under attack: an authenticated rank's claimed length allocates nothing",
          "[tcp_store][attack]") {
  Root root;
  const std::uint16_t port = root.port;
  ibscope::bootstrap::TcpStoreServer server(std::move(root.listener), 2, kToken, 5.0);
  RawClient r0(port), r1(port);
  r0.hello(kToken, 0, 2, "alpha");
  r1.hello(kToken, 1, 2, "beta");
  r0.expect(wire::MsgType::kWelcome);
  r1.expect(wire::MsgType::kWelcome);

  StderrCapture capture;
  ProcessAllocationWatch watch;
  std::string expected;
  SECTION("the largest length allowed, then only a little of it") {
    // A contribution claiming 256 MiB of which 64 KiB arrive: the server keeps what arrived.
    Bytes frame = raw({0, 0, 0, 0x10, 4});
    frame.resize(frame.size() + 65536, std::byte{7});
    r1.send(frame);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(watch.largest() < (std::size_t{1} << 20));
    r1.close();
    expected = "rank 1 (beta) exited or crashed: its bootstrap connection closed";
  }
  SECTION("a length beyond the bound") {
    r1.send(raw({0xff, 0xff, 0xff, 0xff, 4, 0, 0}));
    expected =
        "rank 1 (beta) sent a malformed bootstrap message: bootstrap protocol: frame "
        "length 4294967295 outside 1..268435456";
  }
  const auto abort = wire::decode_abort(r0.expect(wire::MsgType::kAbort, 3.0));
  CHECK(abort.reason == expected);
  CHECK(watch.largest() < (std::size_t{1} << 20));
}

TEST_CASE("store under attack: a client bounds the root's claimed length before allocating",
          "[tcp_store][attack]") {
  // A fake root answers the hello with a frame header claiming 4 GiB.
  Root root;
  const std::uint16_t port = root.port;
  std::thread fake_root([&] {
    net::Fd c(::accept(root.listener.get(), nullptr, nullptr));
    std::array<std::byte, 256> buf{};
    (void)::recv(c.get(), buf.data(), buf.size(), 0);
    const Bytes evil = raw({0xff, 0xff, 0xff, 0xff, 2});
    net::write_all(c.get(), evil.data(), evil.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  });
  TcpBootstrapOptions o;
  o.rank = 1;
  o.size = 2;
  o.timeout_s = 5;
  o.root = net::HostPort{"127.0.0.1", port};
  o.token = kToken;
  std::string error;
  const std::size_t largest = largest_allocation_during([&] {
    try {
      (void)ibscope::bootstrap::make_tcp_bootstrap(o);
    } catch (const wire::ProtocolError& e) {
      error = e.what();
    }
  });
  fake_root.join();
  CHECK(error == "bootstrap protocol: frame length 4294967295 outside 1..268435456");
  CHECK(largest < (std::size_t{1} << 20));
}
