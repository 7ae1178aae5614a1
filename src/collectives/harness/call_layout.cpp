#include "ibscope/collectives/harness/call_layout.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace ibscope::collectives {

CallLayout make_call_layout(Collective c, int rank, int ranks, bool in_place, std::byte* send,
                            std::byte* recv, std::size_t count, DataType type, ReduceOp op,
                            int root) {
  const std::size_t es = size_of(type);
  const pattern::Span mine = block_of(count, ranks, rank);
  CallLayout l;
  l.args = CollectiveArgs{nullptr, recv, count, type, op, root};
  switch (c) {
    case Collective::kAllreduce:
    case Collective::kBroadcast:
      l.args.sendbuf = in_place ? recv : send;
      l.input = in_place ? recv : send;
      l.input_count = count;
      l.output = recv;
      l.output_count = count;
      break;
    case Collective::kReduceScatter:
      l.args.sendbuf = in_place ? recv : send;
      l.args.recvbuf = in_place ? recv + mine.offset * es : recv;
      l.input = in_place ? recv : send;
      l.input_count = count;
      l.output = static_cast<std::byte*>(l.args.recvbuf);
      l.output_count = mine.count;
      l.output_first = mine.offset;
      break;
    case Collective::kAllgather:
      l.args.sendbuf = in_place ? recv + mine.offset * es : send;
      l.input = in_place ? recv + mine.offset * es : send;
      l.input_count = mine.count;
      l.input_first = mine.offset;
      l.output = recv;
      l.output_count = count;
      break;
  }
  return l;
}

std::size_t pattern_first(Collective c, const CallLayout& l) {
  return c == Collective::kAllgather ? 0 : l.input_first;
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
  if (!in_place || c == Collective::kAllgather || c == Collective::kBroadcast) {
    pattern.fill_poison(l.output, l.output_count);
  }
  if (c == Collective::kBroadcast) {
    if (rank == l.args.root) pattern.fill_input(rank, l.input, l.input_count, 0, seed);
    return;
  }
  pattern.fill_input(rank, l.input, l.input_count, pattern_first(c, l), seed);
}

std::size_t count_wrong_call(Collective c, int ranks, const VerifiablePattern& pattern,
                             const CallLayout& l, std::uint64_t seed) {
  switch (c) {
    case Collective::kAllreduce:
    case Collective::kReduceScatter:
      return pattern.count_wrong(l.output, l.output_count, l.output_first, seed);
    case Collective::kBroadcast:
      return pattern.count_wrong_input(l.args.root, l.output, l.output_count, 0, seed);
    case Collective::kAllgather: {
      std::size_t wrong = 0;
      const std::size_t es = size_of(l.args.type);
      for (int q = 0; q < ranks; ++q) {
        const pattern::Span b = block_of(l.args.count, ranks, q);
        // Each rank's block is its own vector, indexed from 0 (pattern_first).
        wrong += pattern.count_wrong_input(q, l.output + b.offset * es, b.count, 0, seed);
      }
      return wrong;
    }
  }
  return 0;
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
