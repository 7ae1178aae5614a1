#include "ibscope/cli/sweep_bodies.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/job/job_memory.hpp"
#include "ibscope/output/console.hpp"
#include "ibscope/output/progress_line.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::cli {
namespace {

// The best algorithm per size, when several were measured side by side.
void print_crossovers(std::FILE* out, const collectives::TuningTable& t) {
  for (const auto& e : t.entries) {
    fmt::print(out, "# Fastest {} algorithm by size ({} ranks, {} hosts; median time):\n",
               e.collective, e.ranks, e.hosts);
    std::uint64_t below = 0;  // sizes above the previous range's bound
    for (const auto& r : e.ranges) {
      const std::string range =
          r.max_bytes == UINT64_MAX
              ? fmt::format("> {}", units::format_size(below))
              : fmt::format("{}<= {}",
                            below == 0 ? "" : fmt::format("> {}, ", units::format_size(below)),
                            units::format_size(r.max_bytes));
      fmt::print(out, "#   {:<24} {}\n", range, r.algorithm);
      below = r.max_bytes;
    }
  }
  std::fflush(out);
}

// "host" for every rank alike, else "a,b" for the pair.
std::string pair_label(const std::vector<std::string>& per_rank, int a, int b) {
  const auto& la = per_rank.at(static_cast<std::size_t>(a));
  const auto& lb = per_rank.at(static_cast<std::size_t>(b));
  return la == lb ? la : la + "," + lb;
}

}  // namespace

int collective_body(job::JobContext& ctx, const collectives::CollectiveSweepOptions& options) {
  output::ProgressLine progress(ctx.show_progress);
  collectives::CollectiveSweepOptions o = options;
  o.progress = progress.callback();
  o.nic_counters = ctx.nic_counters;
  transport::StagingScope staging(ctx.comm());  // `ibscope run` reuses the communicator
  job::set_up_memory(ctx, o);
  std::optional<output::CollectiveTable> table;
  if (ctx.table_out != nullptr) {
    table.emplace(ctx.table_out, collectives::descriptor_of(o.collective).takes_counts);
    table->header();
  }
  std::uint64_t wrong = 0;
  collectives::TuningRows tuning_rows;
  collectives::run_collective_sweep(ctx.comm(), o,
                                    [&](const std::vector<measure::CollectiveRow>& rows) {
                                      for (const auto& r : rows) {
                                        if (r.wrong) wrong += *r.wrong;
                                        if (ctx.results != nullptr) ctx.results->add_row(r);
                                      }
                                      tuning_rows.add(rows);
                                      ctx.rows_recorded();
                                      progress.clear();
                                      if (table) table->rows(rows);
                                    });
  progress.clear();
  if (table) table->footer();
  if (const auto tuning = tuning_rows.derive(ctx.comm().bootstrap().host_count())) {
    if (ctx.results != nullptr) ctx.results->tuning = *tuning;
    if (ctx.table_out != nullptr) print_crossovers(ctx.table_out, *tuning);
  }
  if (wrong > 0) {
    if (ctx.comm().rank() == 0) {
      log::error("{} verification failed: {} wrong elements in total (see #wrong)",
                 name_of(o.collective), wrong);
    }
    return 1;
  }
  return 0;
}

int p2p_body(job::JobContext& ctx, const measure::P2pOptions& options) {
  output::ProgressLine progress(ctx.show_progress);
  measure::P2pOptions o = options;
  o.progress = progress.callback();
  o.nic_counters = ctx.nic_counters;
  transport::StagingScope staging(ctx.comm());  // `ibscope run` reuses the communicator
  const job::MemoryLabels labels = job::set_up_memory(ctx, o);
  std::optional<output::P2pTable> table;
  if (ctx.table_out != nullptr) table.emplace(ctx.table_out);
  measure::run_p2p(ctx.comm(), o, [&](const std::vector<measure::P2pRow>& measured) {
    std::vector<measure::P2pRow> rows = measured;
    for (auto& r : rows) {  // rank 0's rows; the labels are on rank 0
      if (labels.empty()) continue;
      r.mem = pair_label(labels.kinds, r.rank_a, r.rank_b);
      r.mem_path = pair_label(labels.paths, r.rank_a, r.rank_b);
    }
    if (ctx.results != nullptr) {
      for (const auto& r : rows) ctx.results->add_row(r);
    }
    ctx.rows_recorded();
    progress.clear();
    if (table) table->rows(rows);
  });
  return 0;
}

results::CollectiveParams params_of(const collectives::CollectiveSweepOptions& o) {
  results::CollectiveParams p;
  p.collective = std::string(name_of(o.collective));
  p.root = o.root;
  if (o.tuning) p.tuning_source = o.tuning->source;
  p.min_bytes = o.sweep.min_bytes;
  p.max_bytes = o.sweep.max_bytes;
  p.step_factor = o.sweep.factor;
  p.step_bytes = o.sweep.step_bytes;
  p.iters = o.iters;
  p.warmup_iters = o.warmup;
  p.warmup_ms = o.warmup_min_s * 1e3;
  p.check = o.check;
  if (o.counts) p.counts = o.counts->text;
  for (auto t : o.types) p.types.emplace_back(name_of(t));
  for (auto op : o.ops) p.ops.emplace_back(name_of(op));
  p.algorithms = o.algorithms;
  p.chunk_bytes = o.algorithm_options.chunk_bytes;
  p.timeout_s = o.timeout_s;
  p.mem = std::string(memory::name_of(o.memory_request.kind));
  p.mem_path = std::string(memory::name_of(o.memory_request.path));
  p.stage_chunk_bytes = o.memory_request.fragment_bytes;
  return p;
}

results::P2pParams params_of(const measure::P2pOptions& o) {
  results::P2pParams p;
  p.min_bytes = o.sweep.min_bytes;
  p.max_bytes = o.sweep.max_bytes;
  p.step_factor = o.sweep.factor;
  p.latency_iters = o.latency_iters;
  p.bw_iters = o.bw_iters;
  p.warmup_iters = o.warmup;
  p.window = o.window;
  p.pairs = measure::to_string(o.pairs);  // "all" or "first"
  p.timeout_s = o.timeout_s;
  for (const auto& s : o.memory_sides) p.mem.emplace_back(memory::name_of(s.kind));
  p.mem_path =
      o.memory_sides.empty() ? "auto" : std::string(memory::name_of(o.memory_sides[0].path));
  p.stage_chunk_bytes = o.memory_sides.empty() ? 0 : o.memory_sides[0].fragment_bytes;
  return p;
}

}  // namespace ibscope::cli
