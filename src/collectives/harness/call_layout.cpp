#include "ibscope/collectives/harness/call_layout.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "ibscope/collectives/descriptor.hpp"

namespace ibscope::collectives {

std::size_t call_count(Collective c, std::size_t count, int ranks) {
  const auto round = descriptor_of(c).call_count;
  return round != nullptr ? round(count, std::max(1, ranks)) : count;
}

CallLayout make_call_layout(Collective c, int rank, int ranks, bool in_place, std::byte* send,
                            std::byte* recv, std::size_t count, DataType type, ReduceOp op,
                            int root, const AlltoallvPlan* counts) {
  count = call_count(c, count, ranks);
  CallLayout l;
  l.args = CollectiveArgs{nullptr, recv, count, type, op, root, counts};
  descriptor_of(c).lay_out(l, send, recv, block_of(count, ranks, rank), size_of(type), in_place);
  return l;
}

std::shared_ptr<const VerifiablePattern> pattern_for(Collective c, DataType type, ReduceOp op,
                                                     int ranks) {
  const ReduceOp pattern_op = reduces(c) ? op : ReduceOp::kMax;
  using Key = std::tuple<DataType, ReduceOp, int>;
  static std::mutex m;
  static std::map<Key, std::weak_ptr<const VerifiablePattern>> live;
  const Key key{type, pattern_op, ranks};
  {
    std::lock_guard lock(m);
    if (auto p = live[key].lock()) return p;
  }
  // Built outside the lock (milliseconds at large p); two builders of one key both build, and
  // the later one's tables are kept.
  auto p = std::make_shared<const VerifiablePattern>(type, pattern_op, ranks);
  std::lock_guard lock(m);
  std::erase_if(live, [](const auto& entry) { return entry.second.expired(); });
  live[key] = p;
  return p;
}

void prepare_call(Collective c, int rank, const VerifiablePattern& pattern, const CallLayout& l,
                  bool in_place, std::uint64_t seed) {
  const CollectiveDescriptor& d = descriptor_of(c);
  if (!in_place || d.in_place_output_beyond_input) pattern.fill_poison(l.output, l.output_count);
  d.fill_input(rank, pattern, l, seed);
}

std::size_t count_wrong_call(Collective c, int ranks, const VerifiablePattern& pattern,
                             const CallLayout& l, std::uint64_t seed) {
  return descriptor_of(c).count_wrong(ranks, pattern, l, seed);
}

void corrupt_one_element(const CallLayout& l) {
  if (l.output_count == 0) return;
  l.output[(l.output_count / 2) * size_of(l.args.type)] ^= std::byte{0x40};
}

bool misplace_output(const CallLayout& l, int ranks, misplace::Fault fault,
                     const VerifiablePattern& pattern) {
  const std::size_t es = size_of(l.args.type);
  const misplace::Geometry g{.count = l.output_count,
                             .elem_bytes = es,
                             .blocks = ranks,
                             .chunk_elems = std::max<std::size_t>(
                                 1, l.output_count / static_cast<std::size_t>(ranks) / 4)};
  std::vector<std::byte> poison(es);
  pattern.fill_poison(poison.data(), 1);
  return misplace::apply(fault, std::span(l.output, l.output_count * es), g, 0, 1, poison);
}

}  // namespace ibscope::collectives
