// Pure parts of the probes: option validation, the send window's selective signalling, and the
// peak-bandwidth window (pair selection: test_pair_selection.cpp).
#include <catch2/catch.hpp>
#include <set>

#include "ibscope/core/error.hpp"
#include "ibscope/probes/bandwidth_math.hpp"
#include "ibscope/probes/probe_options.hpp"
#include "ibscope/probes/probe_runner.hpp"
#include "ibscope/probes/send_window.hpp"

using namespace ibscope;
using namespace ibscope::probes;

TEST_CASE("probe registry names perftest's six RC tests") {
  std::set<std::string> names;
  for (const auto& t : probe_tests()) names.insert(std::string(t.name));
  CHECK(names == std::set<std::string>{"write_bw", "write_lat", "read_bw", "read_lat", "send_bw",
                                       "send_lat"});
  CHECK(find_probe_test("read_lat").verb == Verb::kRead);
  CHECK(find_probe_test("read_lat").metric == Metric::kLatency);
  CHECK(find_probe_test("send_bw").perftest_peer == "ib_send_bw");
  CHECK_THROWS_WITH(find_probe_test("atomic_lat"), Catch::Contains("write_bw, write_lat"));
  CHECK(default_inline_bytes(find_probe_test("write_lat")) == kDefaultInlineBytes);
  CHECK(default_inline_bytes(find_probe_test("read_lat")) == 0);
  CHECK(default_inline_bytes(find_probe_test("send_bw")) == 0);
}

TEST_CASE("probe options refuse what cannot run") {
  ProbeOptions o;
  o.test = &find_probe_test("write_bw");
  o.sizes_bytes = {65536};
  o.iterations = 10;
  o.tx_depth = 128;
  CHECK_NOTHROW(validate(o));
  auto bad = o;
  bad.sizes_bytes = {0};
  CHECK_THROWS_AS(validate(bad), UsageError);
  bad = o;
  bad.sizes_bytes = {(1ULL << 31) + 1};
  CHECK_THROWS_WITH(validate(bad), Catch::Contains("2 GiB"));
  bad = o;
  bad.test = &find_probe_test("send_lat");
  bad.bidirectional = true;
  CHECK_THROWS_WITH(validate(bad), Catch::Contains("bandwidth tests, not send_lat"));
  bad = o;
  bad.tuning.mtu_bytes = 1500;
  CHECK_THROWS_WITH(validate(bad), Catch::Contains("-m/--mtu 1500"));
  bad = o;
  bad.tuning.rnr_retry = 8;
  CHECK_THROWS_AS(validate(bad), UsageError);
  bad = o;
  bad.tx_depth = 0;
  CHECK_THROWS_AS(validate(bad), UsageError);
}

TEST_CASE("send window signals every n-th post and never overfills") {
  SendWindow w(8, 4);
  int signalled = 0, retire_total = 0;
  for (int i = 0; i < 8; ++i) {
    REQUIRE_FALSE(w.full());
    const bool s = w.next_signalled(false);
    const int retires = w.posted(s);
    if (s) {
      ++signalled;
      CHECK(retires == 4);
      retire_total += retires;
    } else {
      CHECK(retires == 0);
    }
  }
  CHECK(signalled == 2);
  CHECK(w.full());
  w.retired(4);
  CHECK_FALSE(w.full());
  CHECK(w.in_flight == 4);
  // The last post of a stream is signalled and retires the unsignalled ones before it.
  w.posted(w.next_signalled(false));
  CHECK(w.next_signalled(true));
  CHECK(w.posted(true) == 2);
  // signal_every above the depth would deadlock: it is clamped.
  SendWindow clamped(2, 100);
  CHECK(clamped.signal_every == 2);
  SendWindow one(1, 1);
  CHECK(one.next_signalled(false));
  CHECK(encode_wr_id(3, 100) >> 32 == 3);
  CHECK(wr_id_qp(encode_wr_id(7, 9)) == 7);
  CHECK(wr_id_retires(encode_wr_id(7, 9)) == 9);
}

TEST_CASE("peak message rate is the best window of the run") {
  CHECK(peak_message_rate({}, 10) == 0);
  // 100 messages per mark; the third interval is twice as fast as the others.
  const std::vector<CompletionMark> marks = {
      {0.001, 100}, {0.002, 200}, {0.0025, 300}, {0.0035, 400}};
  CHECK(peak_message_rate(marks, 100) == Approx(200000));  // 100 msgs in 0.5 ms
  CHECK(peak_message_rate(marks, 400) == Approx(400 / 0.0035));
  // A window longer than the run falls back to the average.
  CHECK(peak_message_rate(marks, 10000) == Approx(400 / 0.0035));
  // Completions observed in bursts: two marks 0.1 us apart must not make a peak of 1e9/s.
  const std::vector<CompletionMark> bursts = {
      {0.5, 100}, {0.5000001, 200}, {1.0, 300}, {1.0000001, 400}};
  CHECK(peak_message_rate(bursts, 100) == Approx(400).epsilon(1e-3));
  CHECK(peak_window_messages(5000, 100) == 250);
  CHECK(peak_window_messages(100, 100) == 100);
  CHECK(peak_window_messages(10, 0) == 1);
}

TEST_CASE("probe: perftest's defaults by metric") {
  const auto bw = perftest_defaults(find_probe_test("write_bw"));
  CHECK(bw.size_bytes == 65536);
  CHECK(bw.iterations == 5000);
  CHECK(bw.tx_depth == 128);
  const auto lat = perftest_defaults(find_probe_test("send_lat"));
  CHECK(lat.size_bytes == 2);
  CHECK(lat.iterations == 1000);
  CHECK(lat.tx_depth == 1);
  CHECK(perftest_warmup(5000) == 100);
  CHECK(perftest_warmup(50) == 5);
  CHECK(kPerftestMinBytes == 2);
  CHECK(kPerftestMaxBytes == 8ULL << 20);
}
