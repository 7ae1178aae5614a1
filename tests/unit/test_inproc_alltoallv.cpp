// All-to-all-v over the in-process transport (ranks as threads), run by the real sweep harness
// (fill, run, verify, #wrong): every algorithm at 1..8 ranks, every type, skewed counts with
// zero-count peers (a rank that sends nothing, one that receives nothing), hier at every
// placement of those ranks on simulated hosts (1..8 local ranks), misplacement caught, the rows'
// imbalance, and the in-place call refused.

#include <fmt/format.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../common/rank_errors.hpp"
#include "../common/sanitized.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/collectives/harness/counts_call.hpp"
#include "ibscope/collectives/pattern/alltoallv_counts_file.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/transport/inproc/inproc_comm.hpp"
#include "ibscope/transport/intra_host/local_arena.hpp"

using namespace ibscope;
namespace inproc = ibscope::transport::inproc;

namespace {

collectives::CollectiveSweepOptions a2av_options(std::shared_ptr<const collectives::CountsSpec> s) {
  collectives::CollectiveSweepOptions o;
  o.collective = Collective::kAlltoallv;
  o.iters = 1;
  o.warmup = 0;
  o.warmup_min_s = 0;
  o.check = true;
  o.algorithms.clear();  // the options' default ("ring") is all-reduce's
  for (const auto& a : collectives::algorithms_for(Collective::kAlltoallv)) {
    o.algorithms.emplace_back(a.name);
  }
  o.timeout_s = 60;
  o.nic_counters = false;
  o.counts = std::move(s);
  return o;
}

// p ranks, `ranks_per_host` on each simulated host (in blocks).
std::vector<measure::CollectiveRow> a2av_run(int p, const collectives::CollectiveSweepOptions& o,
                                             std::string& error, int ranks_per_host = 1) {
  std::vector<measure::CollectiveRow> rows;
  std::mutex m;
  const auto shape = inproc::job_shape(p, ranks_per_host);
  const auto errors = inproc::run_ranks(shape, [&](transport::Comm& comm) {
    collectives::run_collective_sweep(comm, o, [&](const auto& r) {
      if (comm.rank() != 0) return;
      std::lock_guard lock(m);
      rows.insert(rows.end(), r.begin(), r.end());
    });
    comm.close();
  });
  error = test::first_rank_error(errors);
  return rows;
}

// A p x p matrix where rank 0 sends nothing, nothing reaches rank p-1, the diagonal is empty
// and the rest is skewed by the pair.
std::shared_ptr<const collectives::CountsSpec> a2av_zero_peer_matrix(int p) {
  std::string text = "# rank 0 sends nothing, rank p-1 receives nothing\n";
  for (int s = 0; s < p; ++s) {
    for (int d = 0; d < p; ++d) {
      const bool zero = s == 0 || d == p - 1 || s == d;
      text += fmt::format("{}{}", d == 0 ? "" : " ", zero ? 0 : (s * 7 + d * 3) % 11 + 1);
    }
    text += "\n";
  }
  if (p <= 2) text = p == 1 ? "1\n" : "0 0\n1 0\n";  // p = 2: only rank 1 -> 0 is left
  return std::make_shared<const collectives::CountsSpec>(
      collectives::parse_counts_matrix(text, "zero-peers.txt"));
}

}  // namespace

TEST_CASE(
    "in-process alltoallv: every algorithm, every type, skewed and zero-count peers, "
    "p = 1..8",
    "[inproc][alltoallv]") {
  for (int p = 1; p <= 8; ++p) {
    std::vector<std::shared_ptr<const collectives::CountsSpec>> specs = {
        nullptr,
        std::make_shared<const collectives::CountsSpec>(
            collectives::parse_counts_generator("zipf:1.5:3")),
        a2av_zero_peer_matrix(p)};
    // Every placement of p ranks in blocks: one rank per host runs every algorithm (hier over
    // the network alone), several only hier, whose local ranks read each other's buffers.
    for (int per_host = 1; per_host <= p; ++per_host) {
      if (p % per_host != 0) continue;
      for (const auto& spec : specs) {
        auto o = a2av_options(spec);
        if (per_host > 1) o.algorithms = {"hier"};
        o.types.assign(std::begin(kAllDataTypes), std::end(kAllDataTypes));
        const auto up = static_cast<std::uint64_t>(p);
        // Means per rank below p (many empty blocks and host messages), odd, and large enough
        // for several segments of the pattern's table in the hottest block.
        o.sweep.explicit_bytes = {8 * (up / 2 + 1), 8 * (13 * up + 5), 8 * 40000};
        // Under the sanitizers the placements of several ranks per host run one type of each
        // element size: hier moves bytes, and the calls of every type were half of what they
        // added to the sanitizer suite (docs/build.md).
        if (per_host > 1 && test::kSanitizedBuild) {
          o.types = {DataType::kFloat16, DataType::kFloat32, DataType::kFloat64};
        }
        INFO("p " << p << ", " << per_host << " per host, counts "
                  << (spec ? spec->text : "uniform"));
        std::string error;
        const auto rows = a2av_run(p, o, error, per_host);
        REQUIRE(error == "");
        // out of place only
        REQUIRE(rows.size() ==
                o.algorithms.size() * o.types.size() * o.sweep.explicit_bytes.size());
        for (const auto& row : rows) {
          INFO(row.algorithm << " " << name_of(row.type) << " " << row.size_bytes << " B");
          CHECK_FALSE(row.in_place);
          REQUIRE(row.wrong.has_value());
          CHECK(*row.wrong == 0);
          REQUIRE(row.send_imbalance.has_value());
          CHECK(*row.recv_imbalance >= 1.0);
          CHECK(*row.pair_imbalance >= 1.0);
          CHECK(row.busbw_gbps == Approx(row.algbw_gbps * (p - 1) / p));
        }
      }
    }
  }
}

TEST_CASE("in-process alltoallv: a misplaced or corrupted block is counted",
          "[inproc][alltoallv]") {
  const auto zipf = std::make_shared<const collectives::CountsSpec>(
      collectives::parse_counts_generator("zipf:1:9"));
  for (int p : {2, 3, 5}) {
    for (const char* fault : {"swap-blocks", "shift-block", "drop-chunk"}) {
      ::setenv("IBSCOPE_FAULT_MISPLACE", fmt::format("{}:{}", p - 1, fault).c_str(), 1);
      auto o = a2av_options(zipf);
      o.sweep.explicit_bytes = {4 * 4001};
      std::string error;
      const auto rows = a2av_run(p, o, error);
      ::unsetenv("IBSCOPE_FAULT_MISPLACE");
      INFO("p " << p << " " << fault);
      REQUIRE(error == "");
      REQUIRE_FALSE(rows.empty());
      for (const auto& row : rows) CHECK(row.wrong.value_or(0) > 0);
    }
  }
}

TEST_CASE("in-process alltoallv: the rows' imbalance is the counts'", "[inproc][alltoallv]") {
  const auto spec = a2av_zero_peer_matrix(4);
  auto o = a2av_options(spec);
  o.sweep.explicit_bytes = {4 * 1000};
  std::string error;
  const auto rows = a2av_run(4, o, error);
  REQUIRE(error == "");
  REQUIRE(rows.size() == o.algorithms.size());
  const collectives::CountsCall call = collectives::counts_call(spec.get(), 4, 0, 1000);
  for (const auto& row : rows) {
    CHECK(row.size_bytes == 4000);  // the mean a rank sends
    CHECK(*row.send_imbalance == Approx(call.imbalance.send_max_over_mean));
    CHECK(*row.recv_imbalance == Approx(call.imbalance.recv_max_over_mean));
    CHECK(*row.pair_imbalance == Approx(call.imbalance.pair_max_over_mean));
    CHECK(*row.send_imbalance > 1.0);  // rank 0 sends nothing
  }
}

TEST_CASE("in-process alltoallv: an in-place call or one without counts is refused",
          "[inproc][alltoallv]") {
  for (const auto& info : collectives::algorithms_for(Collective::kAlltoallv)) {
    // By rank: the in-place call's message, then the call's without counts (checked here:
    // Catch's assertions are not for the rank threads).
    std::vector<std::string> in_place(2), no_counts(2);
    const auto errors = inproc::run_ranks(inproc::job_shape(2, 1), [&](transport::Comm& comm) {
      const auto me = static_cast<std::size_t>(comm.rank());
      const collectives::CountsCall call = collectives::counts_call(nullptr, 2, comm.rank(), 8);
      std::vector<float> buf(16), out(16);
      collectives::AlgorithmOptions options;
      if (info.caps.needs_intra_host_arena) options.arena = intra_host::LocalArena::create(comm);
      auto algo = info.create(comm, options);
      collectives::CollectiveArgs a{buf.data(), buf.data(), 8, DataType::kFloat32};
      a.counts = &call.plan;
      try {
        algo->run(a, Deadline(5));
      } catch (const UsageError& e) {
        in_place[me] = e.what();
      }
      a.counts = nullptr;
      a.recvbuf = out.data();
      try {
        algo->run(a, Deadline(5));
      } catch (const UsageError& e) {
        no_counts[me] = e.what();
      }
      comm.close();
    });
    INFO(info.name);
    REQUIRE(test::first_rank_error(errors) == "");
    for (const auto& m : in_place) CHECK_THAT(m, Catch::Contains("no in-place form"));
    for (const auto& m : no_counts) CHECK_THAT(m, Catch::Contains("no counts"));
  }
}
