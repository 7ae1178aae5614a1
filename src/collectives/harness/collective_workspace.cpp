#include "ibscope/collectives/harness/collective_workspace.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/buffer_budget.hpp"
#include "ibscope/transport/ucx/comm.hpp"

namespace ibscope::collectives {
namespace {

// Runs the budget check before the members that allocate are made.
std::uint64_t checked_max_bytes(const ucx::Comm& comm, const CollectiveSweepOptions& o,
                                std::string_view what, std::string size_flag) {
  const std::uint64_t max_bytes = max_sweep_bytes(o);
  measure::require_buffers_fit(
      comm, measure::collective_buffer_plan(
                fmt::format("{} up to {}", what, units::format_size(max_bytes)),
                std::move(size_flag), max_bytes, space_of(o.algorithm_options).kind()));
  return max_bytes;
}

}  // namespace

std::uint64_t max_sweep_bytes(const CollectiveSweepOptions& o) {
  std::uint64_t max_bytes = 0;
  for (DataType t : o.types) {
    for (auto b : measure::sweep_sizes(o.sweep, size_of(t))) max_bytes = std::max(max_bytes, b);
  }
  return max_bytes;
}

CollectiveWorkspace::CollectiveWorkspace(ucx::Comm& comm, const CollectiveSweepOptions& options,
                                         std::string_view what, std::string size_flag)
    : comm_(comm),
      options_(options),
      max_bytes_(checked_max_bytes(comm, options, what, std::move(size_flag))),
      space_(space_of(options.algorithm_options)),
      on_host_(space_.kind() == memory::MemKind::kHost),
      send_(space_.allocate(max_bytes_)),
      recv_(space_.allocate(max_bytes_)),
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
  if (pick) return {*pick, fmt::format("auto: tuning table from {}", options_.tuning->source)};
  return {default_algorithm(c, comm_.size(), bytes), "auto: default rule"};
}

CollectiveAlgorithm& CollectiveWorkspace::instance(const std::string& name) {
  auto& slot = instances_[name];
  if (!slot)
    slot = find_algorithm(options_.collective, name).create(comm_, options_.algorithm_options);
  return *slot;
}

}  // namespace ibscope::collectives
