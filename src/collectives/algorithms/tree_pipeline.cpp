#include "ibscope/collectives/algorithms/tree_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "ibscope/collectives/algorithms/without_peers.hpp"
#include "ibscope/core/reduce.hpp"

namespace ibscope::collectives {
namespace {

// Slots start on cache lines, so every element in them is aligned whatever --chunk says.
std::size_t slot_size(std::size_t bytes) noexcept {
  constexpr std::size_t kAlign = 64;
  return (std::max<std::size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

TreePipeline::TreePipeline(transport::Comm& comm, std::vector<pattern::TreeNode> trees,
                           std::size_t chunk_bytes, std::string_view name,
                           std::shared_ptr<memory::MemorySpace> memory)
    : comm_(comm), chunk_bytes_(chunk_bytes), scratch_(std::move(memory)), name_(name) {
  trees_.resize(trees.size());
  // Receives first in the stream list, so that each pass posts them before the sends.
  for (std::size_t i = 0; i < trees.size(); ++i) {
    const int ti = static_cast<int>(i);
    Tree& t = trees_[i];
    t.node = trees[i];
    for (int k = 0; k < 2; ++k) {
      if (t.node.children[k] != pattern::kNoRank) {
        t.up_recv[k] = add_stream(Kind::kUpRecv, ti, t.node.children[k]);
      }
    }
    if (t.up_recv[0] >= 0 && t.up_recv[1] >= 0) {
      streams_[static_cast<std::size_t>(t.up_recv[0])].other_child = t.up_recv[1];
      streams_[static_cast<std::size_t>(t.up_recv[1])].other_child = t.up_recv[0];
    }
    if (!t.node.is_root()) {
      t.down_recv = add_stream(Kind::kDownRecv, ti, t.node.parent);
      t.up_send = add_stream(Kind::kUpSend, ti, t.node.parent);
    }
    for (int k = 0; k < 2; ++k) {
      if (t.node.children[k] != pattern::kNoRank) {
        t.down_send[k] = add_stream(Kind::kDownSend, ti, t.node.children[k]);
      }
    }
  }
  slot_bytes_ = slot_size(chunk_bytes_);
  scratch_.reserve(up_recv_streams_ * kWindow * slot_bytes_);
}

int TreePipeline::add_stream(Kind kind, int tree, int peer) {
  Stream s;
  s.kind = kind;
  s.tree = tree;
  s.peer = peer;
  if (kind == Kind::kUpRecv) s.scratch_offset = kWindow * up_recv_streams_++;
  streams_.push_back(std::move(s));
  return static_cast<int>(streams_.size() - 1);
}

bool TreePipeline::up_reduced(const Tree& t, std::size_t chunk) const noexcept {
  for (int k : t.up_recv) {
    if (k >= 0 && streams_[static_cast<std::size_t>(k)].done <= chunk) return false;
  }
  return true;
}

bool TreePipeline::ready(const Stream& s, std::size_t chunk) const noexcept {
  const Tree& t = trees_[static_cast<std::size_t>(s.tree)];
  switch (s.kind) {
    case Kind::kUpRecv:
      return true;  // the window frees chunk - kWindow's slot first
    case Kind::kUpSend:
      return up_reduced(t, chunk);
    case Kind::kDownRecv:
      // It lands where our up-send of the same chunk reads from, unless that is a leaf's
      // separate input.
      return (t.node.is_leaf() && !in_place_) ||
             streams_[static_cast<std::size_t>(t.up_send)].done > chunk;
    case Kind::kDownSend:
      return t.node.is_root() ? up_reduced(t, chunk)
                              : streams_[static_cast<std::size_t>(t.down_recv)].done > chunk;
  }
  return false;
}

int TreePipeline::waiting_for() const noexcept {
  // Prefer a peer we are receiving from: that is the one a stall is usually waiting on.
  int fallback = -1;
  for (const Stream& s : streams_) {
    if (s.done == trees_[static_cast<std::size_t>(s.tree)].chunks) continue;
    if (s.posted > s.done && (s.kind == Kind::kUpRecv || s.kind == Kind::kDownRecv)) {
      return s.peer;
    }
    if (fallback < 0) fallback = s.peer;
  }
  return fallback;
}

void TreePipeline::run(const CollectiveArgs& a, const Deadline& deadline) {
  const std::size_t es = size_of(a.type);
  auto* out = static_cast<std::byte*>(a.recvbuf);
  const auto* in = static_cast<const std::byte*>(a.sendbuf);
  if (allreduce_without_peers(a, comm_.size(), scratch_.space())) return;
  const int me = comm_.rank();
  in_place_ = in == out;
  const std::uint32_t seq = comm_.next_op_seq();

  std::size_t chunk_elems = std::max<std::size_t>(1, chunk_bytes_ / es);
  for (std::size_t i = 0; i < trees_.size(); ++i) {
    Tree& t = trees_[i];
    t.span = trees_.size() == 1 ? pattern::Span{0, a.count}
                                : pattern::dbt_half(a.count, static_cast<int>(i));
    chunk_elems = std::max(chunk_elems, (t.span.count + kMaxChunksPerTree - 1) / kMaxChunksPerTree);
  }
  for (Tree& t : trees_) t.chunks = pattern::chunk_count(t.span.count, chunk_elems);
  if (chunk_elems * es > slot_bytes_) {  // only for tiny chunks or huge counts; not timed twice
    slot_bytes_ = slot_size(chunk_elems * es);
    scratch_.reserve(up_recv_streams_ * kWindow * slot_bytes_);
  }
  for (Stream& s : streams_) {
    s.posted = s.done = 0;
    for (transport::Request& r : s.reqs)
      r = transport::Request{};  // cancels leftovers of a failed run
  }
  if (what_count_ != a.count) {
    what_ = fmt::format("allreduce {} ({} elements)", name_, a.count);
    what_count_ = a.count;
  }

  auto slot = [&](const Stream& s, std::size_t chunk) {
    return scratch_.data() + (s.scratch_offset + chunk % kWindow) * slot_bytes_;
  };
  auto post = [&](Stream& s, std::size_t chunk) {
    const Tree& t = trees_[static_cast<std::size_t>(s.tree)];
    const pattern::Span span = pattern::chunk_of(t.span, chunk_elems, chunk);
    const std::size_t off = span.offset * es;
    const std::size_t bytes = span.count * es;
    const auto up_step = static_cast<std::uint32_t>(2 * s.tree);
    const auto c = static_cast<std::uint32_t>(chunk);
    transport::Request& req = s.reqs[chunk % kWindow];
    switch (s.kind) {
      case Kind::kUpRecv:
        req = comm_.irecv(s.peer, transport::make_tag(s.peer, seq, up_step, c), slot(s, chunk),
                          bytes);
        break;
      case Kind::kUpSend:
        // A leaf has nothing to reduce: its chunk goes up straight from the input.
        req = comm_.isend(s.peer, transport::make_tag(me, seq, up_step, c),
                          (t.node.is_leaf() ? in : out) + off, bytes);
        break;
      case Kind::kDownRecv:
        req =
            comm_.irecv(s.peer, transport::make_tag(s.peer, seq, up_step + 1, c), out + off, bytes);
        break;
      case Kind::kDownSend:
        req = comm_.isend(s.peer, transport::make_tag(me, seq, up_step + 1, c), out + off, bytes);
        break;
    }
  };
  auto complete = [&](const Stream& s, std::size_t chunk) {
    if (s.kind != Kind::kUpRecv) return;
    const Tree& t = trees_[static_cast<std::size_t>(s.tree)];
    const pattern::Span span = pattern::chunk_of(t.span, chunk_elems, chunk);
    const std::size_t off = span.offset * es;
    // The first child's chunk is reduced with the input, the second with that partial result.
    const bool first =
        s.other_child < 0 || streams_[static_cast<std::size_t>(s.other_child)].done <= chunk;
    scratch_.space().reduce(a.type, a.op, out + off, slot(s, chunk), (first ? in : out) + off,
                            span.count);
  };

  // On an error, cancel what is still pending now: the caller may free the buffers next.
  try {
    while (true) {
      bool moved = false;
      bool finished = true;
      for (Stream& s : streams_) {
        const std::size_t chunks = trees_[static_cast<std::size_t>(s.tree)].chunks;
        while (s.done < s.posted && s.reqs[s.done % kWindow].test()) {
          complete(s, s.done);
          ++s.done;
          moved = true;
        }
        while (s.posted < chunks && s.posted - s.done < kWindow && ready(s, s.posted)) {
          post(s, s.posted);
          ++s.posted;
          moved = true;
        }
        if (s.done < chunks) finished = false;
      }
      if (finished) break;
      if (!moved) {
        comm_.progress();
        comm_.poll_health(what_, deadline, waiting_for());
      }
    }
  } catch (...) {
    for (Stream& s : streams_) {
      for (transport::Request& r : s.reqs) r = transport::Request{};
    }
    throw;
  }
}

}  // namespace ibscope::collectives
