// Every collective and every algorithm, run by the real sweep harness (fill, run, verify, #wrong)
// over the in-process transport: ranks as threads, p = 1..64, every type and op, misplacement
// faults, a slow rank and a dying one. The multi-process tests over UCX stay the real check of
// the transport; these check the algorithms at job sizes no 2-core machine runs as processes.

#include <fmt/format.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../common/rank_errors.hpp"
#include "../common/sanitized.hpp"
#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/collectives/harness/misplace.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/transport/inproc/inproc_comm.hpp"

using namespace ibscope;
namespace inproc = ibscope::transport::inproc;

namespace {

/// Ranks per simulated host for a p-rank job: blocks of 4, 2 or 1, so two-tier algorithms see
/// several local ranks and several hosts.
int ranks_per_host_for(int p) {
  if (p % 4 == 0 && p > 4) return 4;
  if (p % 2 == 0 && p > 2) return 2;
  return 1;
}

/// p = 1..64; under the sanitizers 1..17 and one job of each larger shape class (odd, 2 and 4
/// ranks per host, powers of two and their neighbours), where 64-thread jobs took 200 s.
std::vector<int> job_sizes_1_to_64() {
  std::vector<int> sizes;
  for (int p = 1; p <= 64; ++p) {
    if (!test::kSanitizedBuild || p <= 17 || p == 24 || p == 31 || p == 32 || p == 33 || p == 48 ||
        p == 63 || p == 64) {
      sizes.push_back(p);
    }
  }
  return sizes;
}

std::vector<std::string> algorithm_names(Collective c) {
  std::vector<std::string> names;
  for (const auto& a : collectives::algorithms_for(c)) names.emplace_back(a.name);
  return names;
}

collectives::CollectiveSweepOptions verified_once(Collective c) {
  collectives::CollectiveSweepOptions o;
  o.collective = c;
  o.iters = 1;
  o.warmup = 0;
  o.warmup_min_s = 0;
  o.check = true;
  o.algorithms = algorithm_names(c);
  o.timeout_s = 60;
  // Small chunks: the pipelines cut even these small vectors into many pieces in flight.
  o.algorithm_options.chunk_bytes = 256;
  // The simulated hosts share this machine's NICs: reading them per row would only cost time
  // (the counters have their own tests: test_fabric_counters.cpp, tests/netns, tests/rxe).
  o.nic_counters = false;
  return o;
}

/// Element counts that give uneven blocks (sizes differing by one), empty blocks (count < p)
/// and many chunks.
std::vector<std::uint64_t> sizes_bytes(int p, DataType t) {
  const std::uint64_t es = size_of(t);
  const auto up = static_cast<std::uint64_t>(p);
  return {es * (up / 2 + 1), es * (3 * up + 1), es * (97 * up + 5)};
}

struct SweepResult {
  std::vector<measure::CollectiveRow> rows;  // rank 0's
  std::vector<std::exception_ptr> errors;    // by rank
};

SweepResult run_sweep(const inproc::JobShape& shape,
                      const collectives::CollectiveSweepOptions& options) {
  SweepResult result;
  std::mutex m;
  result.errors = inproc::run_ranks(shape, [&](transport::Comm& comm) {
    collectives::run_collective_sweep(comm, options, [&](const auto& rows) {
      if (comm.rank() != 0) return;
      std::lock_guard lock(m);
      result.rows.insert(result.rows.end(), rows.begin(), rows.end());
    });
    comm.close();
  });
  return result;
}

std::string describe(const measure::CollectiveRow& row) {
  return fmt::format("{} {} {} {} {} B {} p {}", name_of(row.collective), row.algorithm,
                     name_of(row.type), row.op ? name_of(*row.op) : "none", row.size_bytes,
                     row.in_place ? "in-place" : "out-of-place", row.ranks);
}

/// Sets an environment variable for the life of the scope (before any rank thread starts:
/// the ranks only read it).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

}  // namespace

TEST_CASE("in-process: every algorithm of every collective is right for p = 1..64",
          "[inproc][collectives]") {
  for (const int p : job_sizes_1_to_64()) {
    const inproc::JobShape shape = inproc::job_shape(p, ranks_per_host_for(p));
    for (const auto& d : collectives::descriptors()) {
      const Collective c = d.id;
      auto o = verified_once(c);
      o.sweep.explicit_bytes = sizes_bytes(p, DataType::kFloat32);
      o.root = p > 1 ? p / 2 : 0;  // broadcast from a rank other than 0
      INFO(name_of(c) << " p " << p << " (" << shape.ranks_per_host << " per host)");
      const SweepResult r = run_sweep(shape, o);
      REQUIRE(test::first_rank_error(r.errors) == "");
      const std::size_t halves = d.has_in_place ? 2 : 1;  // all-to-all-v: out of place only
      REQUIRE(r.rows.size() == o.algorithms.size() * o.sweep.explicit_bytes.size() * halves);
      for (const auto& row : r.rows) {
        INFO(describe(row));
        REQUIRE(row.wrong.has_value());
        CHECK(*row.wrong == 0);
        CHECK(row.ranks == p);
      }
    }
  }
}

TEST_CASE("in-process: every algorithm is right for every type and op", "[inproc][collectives]") {
  for (int p : {1, 2, 3, 4, 6, 8, 13}) {
    const inproc::JobShape shape = inproc::job_shape(p, ranks_per_host_for(p));
    for (const auto& d : collectives::descriptors()) {
      const Collective c = d.id;
      auto o = verified_once(c);
      o.types.assign(std::begin(kAllDataTypes), std::end(kAllDataTypes));
      o.ops.assign(std::begin(kAllReduceOps), std::end(kAllReduceOps));
      o.sweep.explicit_bytes = {8 * (7 * static_cast<std::uint64_t>(p) + 3)};
      INFO(name_of(c) << " p " << p);
      const SweepResult r = run_sweep(shape, o);
      REQUIRE(test::first_rank_error(r.errors) == "");
      const std::size_t ops = reduces(c) ? o.ops.size() : 1;
      REQUIRE(r.rows.size() ==
              o.algorithms.size() * o.types.size() * ops * (d.has_in_place ? 2 : 1));
      for (const auto& row : r.rows) {
        INFO(describe(row));
        CHECK(row.wrong.value_or(1) == 0);
      }
    }
  }
}

TEST_CASE("in-process: a misplacement in any rank's result is counted in every collective",
          "[inproc][collectives][misplace]") {
  for (int p : {2, 3, 4, 7}) {
    const inproc::JobShape shape = inproc::job_shape(p, ranks_per_host_for(p));
    for (collectives::misplace::Fault f : collectives::misplace::kAllFaults) {
      const int faulty = p - 1;
      const ScopedEnv env("IBSCOPE_FAULT_MISPLACE",
                          fmt::format("{}:{}", faulty, collectives::misplace::name_of(f)));
      for (const auto& d : collectives::descriptors()) {
        const Collective c = d.id;
        auto o = verified_once(c);
        o.sweep.explicit_bytes = {4 * (61 * static_cast<std::uint64_t>(p) + 3)};
        INFO(name_of(c) << " p " << p << " " << collectives::misplace::name_of(f));
        const SweepResult r = run_sweep(shape, o);
        REQUIRE(test::first_rank_error(r.errors) == "");
        REQUIRE_FALSE(r.rows.empty());
        for (const auto& row : r.rows) {
          INFO(describe(row));
          CHECK(row.wrong.value_or(0) > 0);
        }
      }
    }
  }
}

TEST_CASE("in-process: a slow rank changes no result", "[inproc][collectives]") {
  inproc::Faults slow;
  slow.slow_rank = 2;
  slow.send_delay = std::chrono::microseconds(200);
  const inproc::JobShape shape = inproc::job_shape(5, 1, 60, slow);
  for (const auto& d : collectives::descriptors()) {
    const Collective c = d.id;
    auto o = verified_once(c);
    o.sweep.explicit_bytes = {4 * 1001};
    INFO(name_of(c));
    const SweepResult r = run_sweep(shape, o);
    REQUIRE(test::first_rank_error(r.errors) == "");
    for (const auto& row : r.rows) {
      INFO(describe(row));
      CHECK(row.wrong.value_or(1) == 0);
    }
  }
}

TEST_CASE("in-process: a rank that dies mid-collective ends every other rank naming it, in time",
          "[inproc][collectives]") {
  for (const auto& d : collectives::descriptors()) {
    const Collective c = d.id;
    for (const std::string& algorithm : algorithm_names(c)) {
      inproc::Faults dying;
      dying.dying_rank = 1;
      dying.die_at_send = 2;
      const inproc::JobShape shape = inproc::job_shape(4, 2, 20, dying);
      auto o = verified_once(c);
      o.algorithms = {algorithm};
      o.sweep.explicit_bytes = {4 * 4099};
      o.timeout_s = 20;
      INFO(name_of(c) << " " << algorithm);
      const auto start = std::chrono::steady_clock::now();
      const SweepResult r = run_sweep(shape, o);
      const double took_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      REQUIRE(r.errors[1]);  // every algorithm sends from rank 1 at p = 4 (hier: over the rail)
      CHECK(took_s < 10);
      for (std::size_t rank = 0; rank < r.errors.size(); ++rank) {
        INFO("rank " << rank);
        REQUIRE(r.errors[rank]);
        try {
          std::rethrow_exception(r.errors[rank]);
        } catch (const inproc::SimulatedDeath&) {
          CHECK(rank == 1);
        } catch (const RemoteError& e) {
          CHECK_THAT(e.what(), Catch::Contains("rank 1 (inproc-host0)"));
        } catch (const std::exception& e) {
          FAIL("rank " << rank << " ended with neither: " << e.what());
        }
      }
    }
  }
}
