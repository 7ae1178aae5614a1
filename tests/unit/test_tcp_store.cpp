// The TCP store bootstrap with ranks as threads of this process (gloo's base_test style): every
// rank connects to 127.0.0.1:<free port>, rank 0 serves the store on a listening socket it is
// handed (so no port race). Failures are injected by ranks that never start, present the wrong
// token, or are played by hand over a raw socket (to crash, or to emulate another host).
//
// Catch2 assertions are not thread-safe: rank threads only record what happened; the test
// thread asserts after joining them all.

#include <catch2/catch.hpp>

#include "tcp_store_harness.hpp"

using namespace ibscope::test;

// ---------------------------------------------------------------------------------------------

TEST_CASE("tcp bootstrap: jobs of 1, 2, 3 and 5 ranks gather in rank order", "[tcp_store]") {
  const int size = GENERATE(1, 2, 3, 5);
  constexpr int kRounds = 6;
  INFO("job size " << size);
  Root root;
  const auto opts = job_options(root, size, 10.0);
  const auto outcomes = run_ranks(size, [&](int rank, RankOutcome& o) {
    auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
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
  const std::string me = ibscope::bootstrap::local_hostname();
  for (int r = 0; r < size; ++r) {
    const auto& o = outcomes[static_cast<std::size_t>(r)];
    INFO("rank " << r);
    CHECK(o.kind == "tcp");
    CHECK(o.rank == r);
    CHECK(o.size == size);
    // Every rank is a thread on this host.
    CHECK(o.local_rank == r);
    CHECK(o.local_size == size);
    CHECK(o.host_count == 1);
    // Rank 0 knows every host; the others their own and rank 0's (learn_hosts adds more).
    std::vector<std::string> hosts(static_cast<std::size_t>(size), r == 0 ? me : std::string());
    hosts[0] = hosts[static_cast<std::size_t>(r)] = me;
    CHECK(o.hosts == hosts);
    CHECK(o.problems == std::vector<std::string>{});
  }
}

TEST_CASE("tcp bootstrap: gather broadcast publish and lookup", "[tcp_store]") {
  const int size = GENERATE(1, 3, 6);
  INFO("job size " << size);
  Root root;
  const auto opts = job_options(root, size, 10.0);
  const auto outcomes = run_ranks(size, [&](int rank, RankOutcome& o) {
    auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
    for (int round = 0; round < 3; ++round) {
      const auto got = b->gather(payload(round, rank), fmt::format("gather {}", round));
      if (rank == 0) {
        check_round(got, round, size, o.problems);
      } else if (!got.empty()) {
        o.problems.push_back(fmt::format("rank {} got {} blobs from a gather", rank, got.size()));
      }
      const Bytes root_says = b->broadcast(payload(round + 10, rank), "broadcast");
      if (root_says != payload(round + 10, 0)) o.problems.push_back("broadcast: not rank 0's");
    }
    // Each rank publishes, then reads its two ring neighbours only.
    const auto value_of = [](int r) {
      const std::string text = fmt::format("address of rank {}", r);
      return Bytes(reinterpret_cast<const std::byte*>(text.data()),
                   reinterpret_cast<const std::byte*>(text.data()) + text.size());
    };
    b->publish("address", value_of(rank));
    b->barrier("published");
    const std::vector<int> peers = {(rank + 1) % size, (rank + size - 1) % size};
    const auto values = b->lookup("address", peers, "neighbours");
    for (std::size_t i = 0; i < peers.size(); ++i) {
      if (values[i] != value_of(peers[i])) {
        o.problems.push_back(fmt::format("rank {}: wrong value of rank {}", rank, peers[i]));
      }
    }
    if (size > 1) {
      try {
        (void)b->lookup("never published", peers, "missing key");
        o.problems.push_back("a key nobody published was found");
      } catch (const ibscope::RemoteError& e) {
        if (std::string(e.what()).find("has not published 'never published'") ==
            std::string::npos) {
          o.problems.push_back(std::string("unexpected error: ") + e.what());
        }
      }
    }
    b->learn_hosts(peers);
    o.note = b->describe(peers[0]);
    b->barrier("done");
  });
  check_no_errors(outcomes);
  const std::string me = ibscope::bootstrap::local_hostname();
  for (int r = 0; r < size; ++r) {
    INFO("rank " << r);
    const auto& o = outcomes[static_cast<std::size_t>(r)];
    CHECK(o.problems == std::vector<std::string>{});
    CHECK(o.note == fmt::format("rank {} ({})", (r + 1) % size, me));
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
    auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
    o.note = b->describe(3);
    const int three = 3;
    b->learn_hosts(std::span(&three, 1));
    o.note += " / " + b->describe(3);
    for (int round = 0; round < kRounds; ++round) {
      check_round(b->allgather(payload(round, rank), fmt::format("round {}", round)), round, kSize,
                  o.problems);
    }
  });
  check_no_errors(outcomes);
  const std::string me = ibscope::bootstrap::local_hostname();
  REQUIRE(me != "nodeB");
  const std::vector<std::string> hosts = {me, "nodeB", me, "nodeB"};
  for (int r = 0; r < kSize; ++r) {
    INFO("rank " << r);
    CHECK(outcomes[static_cast<std::size_t>(r)].problems == std::vector<std::string>{});
  }
  CHECK(outcomes[0].hosts == hosts);
  // Rank 2 learned rank 3's host only when it asked (the hosts it holds are those of rank 0,
  // of itself and of the ranks it asked for: O(peers), not O(n)).
  CHECK(outcomes[2].hosts == std::vector<std::string>{me, "", me, ""});
  CHECK(outcomes[0].host_count == 2);
  CHECK(outcomes[2].host_count == 2);
  CHECK(outcomes[0].local_rank == 0);
  CHECK(outcomes[0].local_size == 2);
  CHECK(outcomes[2].local_rank == 1);
  CHECK(outcomes[2].local_size == 2);
  CHECK(outcomes[0].note == "rank 3 (nodeB) / rank 3 (nodeB)");
  CHECK(outcomes[2].note == "rank 3 / rank 3 (nodeB)");
}

TEST_CASE("tcp bootstrap: results larger than the socket buffers", "[tcp_store]") {
  // 16 MiB results: the store must block on a full socket, not give up on the rank (it used to
  // write with non-blocking sockets and drop every rank on EAGAIN from 4 MiB on).
  constexpr int kSize = 4;
  constexpr std::size_t kBytes = std::size_t{4} << 20;
  Root root;
  const auto opts = job_options(root, kSize, 10.0);
  const auto outcomes = run_ranks(kSize, [&](int rank, RankOutcome& o) {
    auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
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
    auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
  });
  const std::string refused = error_of<RemoteError>(outcomes[kIntruder]);
  CHECK_THAT(refused, Contains("token") && Contains("refused rank 2"));
  CHECK(outcomes[kIntruder].elapsed_s < 2.0);
  for (int r : {0, 1}) {
    INFO("rank " << r);
    const auto& o = outcomes[static_cast<std::size_t>(r)];
    CHECK_THAT(error_of<TimeoutError>(o),
               Contains("rank 2 (never connected)") && Contains("hostname exchange"));
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
        auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
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
  const auto outcomes = run_ranks(kSize,
                                  [&](int rank, RankOutcome&) {
                                    TcpBootstrapOptions o;
                                    o.rank = rank;
                                    o.size = kSize;
                                    o.timeout_s = kTimeoutS;
                                    o.root = net::HostPort{"127.0.0.1", port};
                                    o.token = kToken;
                                    (void)ibscope::bootstrap::make_tcp_bootstrap(o);
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
    std::unique_ptr<ibscope::bootstrap::Bootstrap> b;
    try {
      b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
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
    const std::string me = ibscope::bootstrap::local_hostname();
    // Rank 1 never asked for rank 2's host: the store names it all the same.
    CHECK(o.hosts == (r == 0 ? std::vector<std::string>{me, me, "crashhost"}
                             : std::vector<std::string>{me, me, ""}));
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
    auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
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
    auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
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
      {"empty token", [](RawClient& c) { c.hello("", 1, kSize, "evil"); }, "no job token"},
      {"wrong job size", [](RawClient& c) { c.hello(kToken, 1, 7, "evil"); },
       "job size 7 does not match this job's 3"},
      {"rank out of range", [](RawClient& c) { c.hello(kToken, 3, kSize, "evil"); },
       "rank 3 out of range"},
      {"contribution before hello",
       [](RawClient& c) {
         c.send(
             wire::encode(wire::Contrib{0, wire::RoundMode::kAllgather, "hostname exchange", {}}));
       },
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
    auto b = ibscope::bootstrap::make_tcp_bootstrap(opts[static_cast<std::size_t>(rank)]);
    record_identity(*b, o);
    for (int round = 0; round < kRounds; ++round) {
      check_round(b->allgather(payload(round, rank), fmt::format("round {}", round)), round, kSize,
                  o.problems);
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
        CHECK_THAT(seen[i],
                   StartsWith(name + ": ") && Contains(strangers[i].refusal) && !Contains("<"));
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
    server = std::make_unique<ibscope::bootstrap::TcpStoreServer>(std::move(root.listener), size,
                                                                  kToken, timeout_s);
  }
  std::uint16_t port = 0;
  std::unique_ptr<ibscope::bootstrap::TcpStoreServer> server;
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
  r0.send(wire::encode(wire::Contrib{0, wire::RoundMode::kAllgather, "a", bytes_of("zero-a")}));
  r0.send(wire::encode(wire::Contrib{1, wire::RoundMode::kAllgather, "b", bytes_of("zero-b")}));
  r1.send(wire::encode(wire::Contrib{1, wire::RoundMode::kAllgather, "b", bytes_of("one-b")}));
  r1.send(wire::encode(wire::Contrib{0, wire::RoundMode::kAllgather, "a", {}}));
  for (RawClient* c : {&r0, &r1}) {
    std::map<std::uint64_t, std::vector<Bytes>> results;
    for (int i = 0; i < 2; ++i) {
      auto r = wire::decode_result(c->expect(wire::MsgType::kResult));
      results[r.seq] = std::move(r.blobs);
    }
    CHECK(results ==
          std::map<std::uint64_t, std::vector<Bytes>>{
              {0, {bytes_of("zero-a"), Bytes{}}}, {1, {bytes_of("zero-b"), bytes_of("one-b")}}});
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
  r0.send(wire::encode(wire::Contrib{0, wire::RoundMode::kAllgather, "phase one", bytes_of("x")}));
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
    r1.send(wire::encode(wire::Contrib{0, wire::RoundMode::kAllgather, "a", {}}));
    r1.send(wire::encode(wire::Contrib{0, wire::RoundMode::kAllgather, "a", {}}));
    expected = "rank 1 (beta) sent a malformed bootstrap message";
  }
  SECTION("a malformed contribution") {
    r1.send_text(std::string("\x02\x00\x00\x00\x04\x00", 6));
    expected = "truncated contribution";
  }
  SECTION("ranks in different phases") {
    r0.send(wire::encode(wire::Contrib{0, wire::RoundMode::kAllgather, "warm-up", {}}));
    r1.send(wire::encode(wire::Contrib{0, wire::RoundMode::kAllgather, "measure", {}}));
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
  for (const char* bad :
       {"node01", ":80", "node01:", "node01:65536", "node01:http", "node01:-1", "node01:80x", ""}) {
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
    CHECK_THROWS_AS(ibscope::bootstrap::make_tcp_bootstrap(o), ibscope::UsageError);
  }
}
