#pragma once
/// The schedule shared by the `tree` and `dbt` all-reduces: a pipelined reduce to the root and
/// broadcast from it, over one or more binary trees at once, each tree carrying its own span of
/// the buffer (pattern/tree.hpp gives the trees).
///
/// Per tree, a rank runs up to six streams, each a sequence of the tree's chunks in order:
/// receive from each child (up), send to the parent (up), receive from the parent (down), send
/// to each child (down). A chunk from a child lands in a scratch slot of that child's stream
/// and is reduced into the output at once (the first one with the input, the second with the
/// partial result); the chunk goes up when every child's copy is reduced (a leaf sends straight
/// from the input). The parent's final chunk lands in the output in place, but only after our
/// own up-send from there completed (a leaf out of place need not wait). The root's and every
/// forwarded final chunk go down. So chunk c can be going down near the root while chunk c + k is
/// still coming up from the leaves (about 2 depth chunks per tree in different phases).
///
/// Bounded and deadlock-free: each stream keeps at most kWindow requests in flight, and its
/// own kWindow scratch slots. A stream only waits for earlier chunks of the same stream or for
/// the same chunk in an earlier phase (a child's up, our up-send), so the chunks flow in a
/// well-founded order and no cycle of waits can form, whatever the peers' timing.
///
/// Tags: make_tag(sender, seq, step = 2 tree + phase (0 up, 1 down), chunk); one op sequence
/// number per run(). Chunks are at least count / 2^20 elements so the index fits the tag.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/pattern/tree.hpp"
#include "ibscope/collectives/scratch.hpp"
#include "ibscope/transport/comm.hpp"

namespace ibscope::collectives {

class TreePipeline {
 public:
  static constexpr std::size_t kWindow = 4;  ///< requests in flight and scratch slots per stream
  static constexpr std::size_t kMaxChunksPerTree = std::size_t{1} << 20;  ///< 20-bit tag field

  /// `trees`: this rank's links in each tree (1 or 2). With 2, tree t carries
  /// pattern::dbt_half(count, t); with 1, the whole buffer. `name` prefixes error messages.
  /// Allocates the scratch slots (kWindow chunks per child stream).
  TreePipeline(transport::Comm& comm, std::vector<pattern::TreeNode> trees, std::size_t chunk_bytes,
               std::string_view name, std::shared_ptr<memory::MemorySpace> memory);

  /// One all-reduce. Allocates nothing once the scratch fits the chunk (it grows only when the
  /// element size exceeds chunk_bytes or the 2^20-chunk tag limit enlarges the chunk).
  void run(const CollectiveArgs& args, const Deadline& deadline);

  std::size_t chunk_bytes() const noexcept { return chunk_bytes_; }

 private:
  enum class Kind : std::uint8_t { kUpRecv, kUpSend, kDownRecv, kDownSend };
  struct Stream {
    Kind kind = Kind::kUpRecv;
    int tree = 0;
    int peer = -1;
    int other_child = -1;  // kUpRecv: index of the sibling stream (reduction order), or -1
    std::size_t scratch_offset = 0;                // kUpRecv: first of its kWindow slots, in slots
    std::size_t posted = 0;                        // chunks posted, in order
    std::size_t done = 0;                          // chunks completed (and reduced), in order
    std::array<transport::Request, kWindow> reqs;  // chunk c in reqs[c % kWindow]
  };
  struct Tree {
    pattern::TreeNode node;
    int up_recv[2] = {-1, -1};  // stream indices
    int up_send = -1;
    int down_recv = -1;
    int down_send[2] = {-1, -1};
    // Per run:
    pattern::Span span;
    std::size_t chunks = 0;
  };

  int add_stream(Kind kind, int tree, int peer);
  bool up_reduced(const Tree& t, std::size_t chunk) const noexcept;
  bool ready(const Stream& s, std::size_t chunk) const noexcept;
  int waiting_for() const noexcept;

  transport::Comm& comm_;
  std::size_t chunk_bytes_;
  std::vector<Tree> trees_;
  std::vector<Stream> streams_;
  std::size_t up_recv_streams_ = 0;
  Scratch scratch_;
  std::size_t slot_bytes_ = 0;
  bool in_place_ = false;  // of the current run
  std::string name_;
  std::string what_;  // error context, reformatted only when the count changes
  std::size_t what_count_ = static_cast<std::size_t>(-1);
};

}  // namespace ibscope::collectives
