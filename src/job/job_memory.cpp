#include "ibscope/job/job_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <span>

#include "ibscope/measure/memory_setup.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::job {
namespace {

bool plain_host(const memory::MemoryRequest& r) {
  return r.kind == memory::MemKind::kHost && r.path == memory::PathRequest::kAuto;
}

// The one place a job body sets up memory: only when some rank asks for more than plain host
// memory (`needed`, the same on every rank: setup_memory is collective).
std::optional<measure::MemorySetup> set_up_if_needed(JobContext& ctx,
                                                     const memory::MemoryRequest& mine,
                                                     bool needed) {
  if (!needed) return std::nullopt;
  return measure::setup_memory(ctx.comm(), mine);
}

// Every rank's `mine`, in rank order, on rank 0 (which labels the rows); empty elsewhere.
std::vector<std::string> gather_labels(transport::Comm& comm, const std::string& mine) {
  const auto all = comm.bootstrap().gather(
      std::span(reinterpret_cast<const std::byte*>(mine.data()), mine.size()), "memory labels");
  std::vector<std::string> out;
  for (const bootstrap::Bytes& b : all)
    out.emplace_back(reinterpret_cast<const char*>(b.data()), b.size());
  return out;
}

}  // namespace

void set_up_memory(JobContext& ctx, collectives::CollectiveSweepOptions& o) {
  const auto m = set_up_if_needed(ctx, o.memory_request, !plain_host(o.memory_request));
  if (!m) return;
  o.algorithm_options.memory = m->space;
  o.mem_path = m->decision.path;
}

MemoryLabels set_up_memory(JobContext& ctx, measure::P2pOptions& o) {
  // Side B is rank 1 when memory is given per side (--pairs first); every other rank is A.
  const int me = ctx.comm().rank();
  const auto& sides = o.memory_sides;
  const memory::MemoryRequest mine = sides.empty()                    ? memory::MemoryRequest{}
                                     : (me == 1 && sides.size() == 2) ? sides[1]
                                                                      : sides[0];
  const auto m = set_up_if_needed(ctx, mine, !std::all_of(sides.begin(), sides.end(), plain_host));
  MemoryLabels labels;
  if (!m) return labels;
  o.memory = m->space;
  // One exchange: "<kind> <path>" per rank.
  for (const std::string& label :
       gather_labels(ctx.comm(), fmt::format("{} {}", memory::name_of(m->space->kind()),
                                             memory::name_of(m->decision.path)))) {
    const auto space = label.find(' ');
    labels.kinds.push_back(label.substr(0, space));
    labels.paths.push_back(label.substr(space + 1));
  }
  return labels;
}

}  // namespace ibscope::job
