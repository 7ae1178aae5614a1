#include "ibscope/collectives/harness/collective_workspace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/collectives/harness/counts_call.hpp"
#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/buffer_budget.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {
namespace {

// Runs the budget check before the members that allocate are made.
std::uint64_t checked_max_bytes(const transport::Comm& comm, const CollectiveSweepOptions& o,
                                std::string_view what, std::string size_flag) {
  // All-to-all-v: a skewed rank sends or receives more than the mean the sizes name.
  const std::uint64_t max_bytes = descriptor_of(o.collective).takes_counts
                                      ? counts_buffer_bytes(o, comm.size())
                                      : max_sweep_bytes(o);
  measure::require_buffers_fit(
      comm, measure::collective_buffer_plan(
                fmt::format("{} up to {}", what, units::format_size(max_bytes)),
                std::move(size_flag), max_bytes, space_of(o.algorithm_options).kind()));
  return max_bytes;
}

// Why this job cannot run `info` (its capabilities against the memory and the placement), or
// empty. Collective over `comm` where it needs the arena.
std::string requirement_problem(transport::Comm& comm, const CollectiveSweepOptions& o,
                                const CollectiveAlgorithmInfo& info) {
  const bool plain_host = space_of(o.algorithm_options).kind() == memory::MemKind::kHost &&
                          o.mem_path == memory::MemPath::kHost;
  if (!info.caps.host_memory_only.empty() && !plain_host) {
    return std::string(info.caps.host_memory_only);
  }
  if (info.caps.needs_intra_host_arena) return intra_host::block_placement_problem(comm);
  return {};
}

// The sweep's algorithms that can run on this job (collective over `comm`): an algorithm that
// reads local peers' buffers in place (hier) needs host memory and ranks placed in blocks per
// host. What cannot run fails the run (UsageError) when the user named it, else it is left out
// with a warning on rank 0.
std::vector<std::string> usable_algorithms(transport::Comm& comm, const CollectiveSweepOptions& o) {
  std::vector<std::string> usable;
  std::map<std::string, std::string> problems;  // by algorithm, each checked once
  for (const auto& name : o.algorithms) {
    const CollectiveAlgorithmInfo* info = algorithm_named(o.collective, name);
    const bool constrained = info != nullptr && (info->caps.needs_intra_host_arena ||
                                                 !info->caps.host_memory_only.empty());
    if (!constrained) {
      usable.push_back(name);
      continue;
    }
    const bool first = problems.count(name) == 0;
    if (first) problems[name] = requirement_problem(comm, o, *info);
    const std::string& problem = problems[name];
    if (problem.empty()) {
      usable.push_back(name);
      continue;
    }
    if (!o.skip_unavailable) throw UsageError(problem);
    if (first && comm.rank() == 0) log::warn("{} left out of the algorithms: {}", name, problem);
  }
  return usable;
}

// Whether -A auto may pick an algorithm that needs the arena: the tuning table names one for
// this collective.
bool auto_may_pick_arena_algorithm(const CollectiveSweepOptions& o) {
  const auto& a = o.algorithms;
  if (!o.tuning || std::find(a.begin(), a.end(), kAutoAlgorithm) == a.end()) return false;
  for (const auto& e : o.tuning->entries) {
    if (e.collective != name_of(o.collective)) continue;
    for (const auto& r : e.ranges) {
      if (needs_arena(o.collective, r.algorithm)) return true;
    }
  }
  return false;
}

// The arena when an algorithm that reads local peers' buffers in place may run (named, or
// picked by auto on a placement that allows it), else null. Collective over `comm`.
std::shared_ptr<intra_host::LocalArena> arena_if_needed(transport::Comm& comm,
                                                        const CollectiveSweepOptions& o,
                                                        const std::vector<std::string>& a) {
  const auto named = [&](const std::string& n) { return needs_arena(o.collective, n); };
  if (std::any_of(a.begin(), a.end(), named)) return intra_host::LocalArena::create(comm);
  const bool has_auto = std::find(a.begin(), a.end(), kAutoAlgorithm) != a.end();
  const bool auto_may_pick =
      has_auto &&
      (auto_may_pick_arena_algorithm(o) ||
       default_rule_may_pick_hier(o.collective, comm.size(), comm.bootstrap().host_count()));
  if (space_of(o.algorithm_options).kind() != memory::MemKind::kHost ||
      o.mem_path != memory::MemPath::kHost || !auto_may_pick) {
    return nullptr;
  }
  if (!intra_host::block_placement_problem(comm).empty()) return nullptr;
  return intra_host::LocalArena::create(comm);
}

AlgorithmOptions with_arena(AlgorithmOptions o, std::shared_ptr<intra_host::LocalArena> arena) {
  o.arena = std::move(arena);
  return o;
}

}  // namespace

std::uint64_t max_sweep_bytes(const CollectiveSweepOptions& o) {
  std::uint64_t max_bytes = 0;
  for (DataType t : o.types) {
    for (auto b : measure::sweep_sizes(o.sweep, size_of(t))) max_bytes = std::max(max_bytes, b);
  }
  return max_bytes;
}

CollectiveWorkspace::CollectiveWorkspace(transport::Comm& comm,
                                         const CollectiveSweepOptions& options,
                                         std::string_view what, std::string size_flag)
    : comm_(comm),
      options_(options),
      max_bytes_(checked_max_bytes(comm, options, what, std::move(size_flag))),
      space_(space_of(options.algorithm_options)),
      on_host_(space_.kind() == memory::MemKind::kHost),
      algorithms_(usable_algorithms(comm, options)),
      arena_(arena_if_needed(comm, options, algorithms_)),
      algorithm_options_(with_arena(options.algorithm_options, arena_)),
      send_(arena_ ? arena_->allocate(max_bytes_) : space_.allocate(max_bytes_)),
      recv_(arena_ ? arena_->allocate(max_bytes_) : space_.allocate(max_bytes_)),
      host_send_(on_host_ ? 0 : max_bytes_),
      host_recv_(on_host_ ? 0 : max_bytes_),
      check_send_(on_host_ ? send_.data() : host_send_.data()),
      check_recv_(on_host_ ? recv_.data() : host_recv_.data()),
      hosts_(comm.bootstrap().host_count()) {}

AlgorithmChoice CollectiveWorkspace::choose(const std::string& asked, std::uint64_t bytes) const {
  if (asked != kAutoAlgorithm) return {asked, ""};
  const Collective c = options_.collective;
  std::optional<std::string> pick;
  if (options_.tuning) pick = select_algorithm(*options_.tuning, c, comm_.size(), hosts_, bytes);
  // An algorithm that needs the arena (hier), which this job could not have (device memory,
  // or ranks not placed in blocks): then the default rule picks.
  if (pick && (!needs_arena(c, *pick) || arena_)) {
    return {*pick, fmt::format("auto: tuning table from {}", options_.tuning->source)};
  }
  if (arena_ && default_rule_picks_hier(c, comm_.size(), hosts_, bytes)) {
    return {std::string(arena_algorithm(c)), "auto: default rule"};
  }
  return {default_algorithm(c, comm_.size(), bytes), "auto: default rule"};
}

CollectiveAlgorithm& CollectiveWorkspace::instance(const std::string& name) {
  auto& slot = instances_[name];
  if (!slot) slot = find_algorithm(options_.collective, name).create(comm_, algorithm_options_);
  return *slot;
}

}  // namespace ibscope::collectives
