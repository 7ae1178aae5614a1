// Tree patterns (in-order binary tree and double binary tree), checked for every p in 1..64:
// the shape of each tree, the leaf/interior split of the two dbt trees, and a symbolic
// simulation of the pipelined chunked reduce + broadcast. In the simulation each element of
// each rank's buffer carries the set of ranks whose contribution it holds (a 64-bit mask), so a
// chunk reduced twice, sent to the wrong rank or left incomplete shows up as a wrong mask. Last,
// the cost formulas against their small- and large-message limits.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "ibscope/collectives/algorithms/dbt_allreduce.hpp"
#include "ibscope/collectives/algorithms/tree_allreduce.hpp"
#include "ibscope/collectives/pattern/tree.hpp"
#include "unit/pattern_fixtures.hpp"

namespace pattern = ibscope::collectives::pattern;
using pattern::kNoRank;

using namespace ibscope::test::pattern_sim;

namespace {

int floor_log2(int p) {
  int d = 0;
  while ((2 << d) <= p) ++d;
  return d;
}

pattern::TreeNode node_of(int tree, int rank, int p) { return pattern::dbt_node(tree, rank, p); }

// Checks one tree's shape; returns "" or the first problem. Also reports its depth.
std::string check_tree(int tree, int p, int& depth_out) {
  auto where = [&](int r) {
    return "tree " + std::to_string(tree) + " p=" + std::to_string(p) +
           " rank=" + std::to_string(r) + ": ";
  };
  const int root = pattern::dbt_root(tree, p);
  if (root < 0 || root >= p) return where(root) + "root out of range";
  int roots = 0;
  std::vector<int> parent_refs(static_cast<std::size_t>(p), 0);  // times named as a child
  for (int r = 0; r < p; ++r) {
    const pattern::TreeNode n = node_of(tree, r, p);
    if (n.is_root()) {
      ++roots;
      if (r != root) return where(r) + "parentless rank is not dbt_root";
    } else {
      if (n.parent < 0 || n.parent >= p || n.parent == r) return where(r) + "bad parent";
      const pattern::TreeNode up = node_of(tree, n.parent, p);
      if (up.children[0] != r && up.children[1] != r) return where(r) + "parent disowns it";
    }
    if (n.children[0] == kNoRank && n.children[1] != kNoRank) {
      return where(r) + "right child without a left child";
    }
    for (int c : n.children) {
      if (c == kNoRank) continue;
      if (c < 0 || c >= p || c == r) return where(r) + "child out of range";
      if (node_of(tree, c, p).parent != r) return where(r) + "child names another parent";
      ++parent_refs[static_cast<std::size_t>(c)];
    }
    if (n.children[0] != kNoRank && n.children[0] == n.children[1]) {
      return where(r) + "same child twice";
    }
  }
  if (roots != 1) return where(root) + std::to_string(roots) + " roots";
  for (int r = 0; r < p; ++r) {
    const int refs = parent_refs[static_cast<std::size_t>(r)];
    if (refs != (r == root ? 0 : 1)) return where(r) + "named as a child " + std::to_string(refs);
  }
  // Every rank reaches the root within p steps (no cycles); the longest path is the depth.
  depth_out = 0;
  for (int r = 0; r < p; ++r) {
    int at = r, steps = 0;
    while (at != root) {
      at = node_of(tree, at, p).parent;
      if (at == kNoRank || ++steps > p) return where(r) + "does not reach the root (cycle?)";
    }
    depth_out = std::max(depth_out, steps);
  }
  return {};
}

// In-order traversal of tree 0 must list the ranks 0..p-1 in order.
void inorder_walk(int rank, int p, std::vector<int>& out) {
  const pattern::TreeNode n = pattern::btree_node(rank, p);
  // With two children, children[0] is the left (smaller) one; with one, it may be either side.
  const int left = n.children[0] != kNoRank && n.children[0] < rank ? n.children[0] : kNoRank;
  int right = kNoRank;
  for (int c : n.children) {
    if (c != kNoRank && c > rank) right = c;
  }
  if (left != kNoRank) inorder_walk(left, p, out);
  out.push_back(rank);
  if (right != kNoRank) inorder_walk(right, p, out);
}

// Symbolic pipelined reduce + broadcast over `n_trees` trees (1: btree over the whole buffer;
// 2: dbt, one half per tree). Time advances in rounds; a message sent in round t is received
// in round t + 1, and each stream (one tree, one direction, one rank) moves at most one chunk
// per round. A rank forwards a chunk in the round it completes it, as the algorithms do.
// Returns "" or the first problem; `rounds_out` is the number of rounds used.
std::string simulate_trees(int p, std::size_t count, std::size_t chunk_elems, int n_trees,
                           int& rounds_out) {
  const std::uint64_t full = full_mask(p);
  const auto up = static_cast<std::size_t>(p);
  std::vector<std::vector<std::uint64_t>> state(up);
  for (int r = 0; r < p; ++r) state[r].assign(count, std::uint64_t{1} << r);
  std::vector<int> merges(count, 0);  // contributions merged into each element, over all ranks
  auto where = [&](const char* phase, int tree, std::size_t chunk, int rank) {
    return std::string(phase) + " p=" + std::to_string(p) + " count=" + std::to_string(count) +
           " chunk_elems=" + std::to_string(chunk_elems) + " trees=" + std::to_string(n_trees) +
           " tree=" + std::to_string(tree) + " chunk=" + std::to_string(chunk) +
           " rank=" + std::to_string(rank) + ": ";
  };

  struct Message {
    int from;
    std::size_t chunk;
    int sent_round;  // received from the next round on
    std::vector<std::uint64_t> data;
  };
  // inbox[tree][dir][rank]: in arrival order. dir 0 = up, 1 = down.
  std::vector<std::vector<std::vector<std::deque<Message>>>> inbox(
      static_cast<std::size_t>(n_trees),
      std::vector<std::vector<std::deque<Message>>>(2, std::vector<std::deque<Message>>(up)));
  std::vector<std::vector<pattern::TreeNode>> nodes(static_cast<std::size_t>(n_trees));
  for (int t = 0; t < n_trees; ++t) {
    for (int r = 0; r < p; ++r) nodes[t].push_back(node_of(t, r, p));
  }

  std::vector<pattern::Span> spans;
  std::vector<std::size_t> chunks;
  std::size_t max_chunks = 0;
  std::size_t covered = 0;
  for (int t = 0; t < n_trees; ++t) {
    spans.push_back(n_trees == 1 ? pattern::Span{0, count} : pattern::dbt_half(count, t));
    if (spans.back().offset != covered) return where("split", t, 0, -1) + "spans do not tile";
    covered += spans.back().count;
    chunks.push_back(pattern::chunk_count(spans.back().count, chunk_elems));
    max_chunks = std::max(max_chunks, chunks.back());
  }
  if (covered != count) return where("split", 0, 0, -1) + "spans do not cover the buffer";

  auto take = [&](const std::vector<std::uint64_t>& buf, pattern::Span s) {
    return std::vector<std::uint64_t>(
        buf.begin() + static_cast<std::ptrdiff_t>(s.offset),
        buf.begin() + static_cast<std::ptrdiff_t>(s.offset + s.count));
  };
  // Next chunk each rank reduces/sends up and receives/sends down, per tree.
  std::vector<std::vector<std::size_t>> up_next(static_cast<std::size_t>(n_trees),
                                                std::vector<std::size_t>(up, 0));
  auto down_next = up_next;
  const int max_rounds = static_cast<int>(max_chunks) + 2 * pattern::tree_depth(p) + 2;
  int round = 0;
  for (;; ++round) {
    bool all_done = true;
    for (int t = 0; t < n_trees; ++t) {
      for (int r = 0; r < p; ++r) {
        if (down_next[t][r] < chunks[t]) all_done = false;
      }
    }
    if (all_done) break;
    if (round >= max_rounds) {
      return where("pipeline", -1, 0, -1) + "not finished after " + std::to_string(round) +
             " rounds (stalled or slower than chunks + 2 depth)";
    }
    for (int t = 0; t < n_trees; ++t) {
      for (int r = 0; r < p; ++r) {
        const pattern::TreeNode& n = nodes[t][r];
        auto& in_up = inbox[t][0][r];
        auto& in_down = inbox[t][1][r];
        // Up: reduce chunk c once every child's chunk c is in, then pass it to the parent.
        std::size_t& c = up_next[t][r];
        if (c < chunks[t]) {
          int have = 0;
          for (const Message& m : in_up) {
            if (m.chunk == c && m.sent_round < round) ++have;
          }
          if (have == n.child_count()) {
            const pattern::Span span = pattern::chunk_of(spans[t], chunk_elems, c);
            for (auto it = in_up.begin(); it != in_up.end();) {
              if (it->chunk != c || it->sent_round == round) {
                ++it;
                continue;
              }
              if (it->from != n.children[0] && it->from != n.children[1]) {
                return where("up", t, c, r) + "chunk from a rank that is not a child";
              }
              if (it->data.size() != span.count) return where("up", t, c, r) + "size mismatch";
              for (std::size_t i = 0; i < span.count; ++i) {
                std::uint64_t& mine = state[r][span.offset + i];
                if ((mine & it->data[i]) != 0) return where("up", t, c, r) + "contribution twice";
                mine |= it->data[i];
                ++merges[span.offset + i];
              }
              it = in_up.erase(it);
            }
            if (n.is_root()) {
              for (std::size_t i = 0; i < span.count; ++i) {
                if (state[r][span.offset + i] != full) {
                  return where("up", t, c, r) + "root's chunk not fully reduced";
                }
              }
            } else {
              inbox[t][0][n.parent].push_back({r, c, round, take(state[r], span)});
            }
            ++c;
          }
        }
        // Down: the root sends chunks it has reduced; others forward what their parent sent.
        std::size_t& d = down_next[t][r];
        if (d < chunks[t]) {
          const pattern::Span span = pattern::chunk_of(spans[t], chunk_elems, d);
          bool ready = false;
          if (n.is_root()) {
            ready = up_next[t][r] > d;
          } else if (!in_down.empty() && in_down.front().sent_round < round) {
            const Message& m = in_down.front();
            if (m.from != n.parent || m.chunk != d) {
              return where("down", t, d, r) + "chunk out of order or not from the parent";
            }
            if (up_next[t][r] <= d) return where("down", t, d, r) + "received before sent up";
            if (m.data.size() != span.count) return where("down", t, d, r) + "size mismatch";
            for (std::size_t i = 0; i < span.count; ++i) {
              if (m.data[i] != full) return where("down", t, d, r) + "incomplete chunk sent";
              state[r][span.offset + i] = m.data[i];
            }
            in_down.pop_front();
            ready = true;
          }
          if (ready) {
            for (int ch : n.children) {
              if (ch != kNoRank) inbox[t][1][ch].push_back({r, d, round, take(state[r], span)});
            }
            ++d;
          }
        }
      }
    }
  }
  rounds_out = round;
  for (int t = 0; t < n_trees; ++t) {
    for (int r = 0; r < p; ++r) {
      if (!inbox[t][0][r].empty() || !inbox[t][1][r].empty()) {
        return where("end", t, 0, r) + "messages left over";
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < count; ++i) {
      if (state[r][i] != full) return where("end", -1, i, r) + "element not complete";
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (merges[i] != p - 1) return where("end", -1, i, -1) + "element not reduced exactly once";
  }
  return {};
}

}  // namespace

TEST_CASE("tree: small trees by hand", "[pattern][tree]") {
  using pattern::btree_node;
  // p = 1: one rank, root and leaf.
  CHECK(pattern::btree_root(1) == 0);
  CHECK(btree_node(0, 1).is_root());
  CHECK(btree_node(0, 1).is_leaf());
  CHECK(pattern::dbt_root(1, 1) == 0);
  // p = 2: tree 0 is 1 -> 0, tree 1 is 0 -> 1.
  CHECK(pattern::btree_root(2) == 1);
  CHECK(btree_node(0, 2).parent == 1);
  CHECK(pattern::dbt_root(1, 2) == 0);
  CHECK(pattern::dbt_node(1, 1, 2).parent == 0);
  // p = 5: places 1..5, root 4 (rank 3) with children 2 and 5 (ranks 1, 4); 2 has 1 and 3.
  CHECK(pattern::btree_root(5) == 3);
  CHECK(btree_node(3, 5).children[0] == 1);
  CHECK(btree_node(3, 5).children[1] == 4);
  CHECK(btree_node(1, 5).children[0] == 0);
  CHECK(btree_node(1, 5).children[1] == 2);
  CHECK(btree_node(4, 5).is_leaf());
  // p = 6: place 6's right subtree (7) is cut, its left child 5 stays.
  CHECK(btree_node(5, 6).children[0] == 4);
  CHECK(btree_node(5, 6).children[1] == kNoRank);
  CHECK(btree_node(5, 6).parent == 3);
  // p = 7: place 6 has 5 and 7; tree 1 is tree 0 shifted: rank r plays rank r + 1.
  CHECK(btree_node(5, 7).children[1] == 6);
  CHECK(pattern::dbt_root(1, 7) == 2);
  CHECK(pattern::dbt_node(1, 2, 7).children[0] == 0);
  CHECK(pattern::dbt_node(1, 2, 7).children[1] == 4);
  // p = 12: place 8's right subtree (12) exists; place 12 has children 10 and (14 cut) none.
  CHECK(btree_node(11, 12).parent == 7);
  CHECK(btree_node(11, 12).children[0] == 9);
  CHECK(btree_node(11, 12).children[1] == kNoRank);
  // p = 11: place 12 is cut, so place 10 hangs from 8 directly.
  CHECK(btree_node(9, 11).parent == 7);
  CHECK(btree_node(7, 11).children[1] == 9);
}

TEST_CASE("tree: both trees are spanning trees of depth floor(log2 p)", "[pattern][tree]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    for (int tree = 0; tree < 2; ++tree) {
      int depth = -1;
      const std::string problem = check_tree(tree, p, depth);
      INFO("p=" << p << " tree=" << tree);
      REQUIRE(problem.empty());
      CHECK(depth == floor_log2(p));
      CHECK(pattern::tree_depth(p) == floor_log2(p));
    }
    for (int r = 0; r < p; ++r) {
      const pattern::TreeNode a = pattern::btree_node(r, p);
      const pattern::TreeNode b = pattern::dbt_node(0, r, p);
      REQUIRE(a.parent == b.parent);
      REQUIRE(a.children[0] == b.children[0]);
      REQUIRE(a.children[1] == b.children[1]);
    }
    REQUIRE(pattern::btree_root(p) == pattern::dbt_root(0, p));
  }
}

TEST_CASE("tree: tree 0 is an in-order tree and leaves are exactly the even ranks",
          "[pattern][tree]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    INFO("p=" << p);
    std::vector<int> order;
    inorder_walk(pattern::btree_root(p), p, order);
    REQUIRE(order.size() == static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) REQUIRE(order[static_cast<std::size_t>(r)] == r);
    for (int r = 0; r < p; ++r) {
      // Rank r sits at place r + 1: odd places (even ranks) are leaves. p == 1: rank 0 alone.
      CHECK(pattern::btree_node(r, p).is_leaf() == (r % 2 == 0));
    }
  }
}

TEST_CASE("dbt: interior sets are disjoint and every rank is a leaf in some tree",
          "[pattern][tree][dbt]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    INFO("p=" << p);
    int interior[2] = {0, 0};
    for (int r = 0; r < p; ++r) {
      INFO("rank=" << r);
      const bool leaf0 = pattern::dbt_node(0, r, p).is_leaf();
      const bool leaf1 = pattern::dbt_node(1, r, p).is_leaf();
      interior[0] += leaf0 ? 0 : 1;
      interior[1] += leaf1 ? 0 : 1;
      // Interior in at most one tree, for every p (p == 2: each rank roots one edge).
      REQUIRE((leaf0 || leaf1));
      // p even: interior in exactly one tree, so per-rank traffic is the same on every rank.
      if (p % 2 == 0) REQUIRE(leaf0 != leaf1);
      // p odd: only rank p - 1 is a leaf in both.
      if (p % 2 == 1 && p > 1) REQUIRE((leaf0 && leaf1) == (r == p - 1));
    }
    CHECK(interior[0] == p / 2);
    CHECK(interior[1] == p / 2);
    if (p >= 2) CHECK(pattern::dbt_root(0, p) != pattern::dbt_root(1, p));
    // Tree 1 is tree 0 shifted by one rank.
    for (int r = 0; r < p; ++r) {
      const pattern::TreeNode a = pattern::dbt_node(1, r, p);
      const pattern::TreeNode b = pattern::dbt_node(0, (r + 1) % p, p);
      auto shift = [p](int x) { return x == kNoRank ? kNoRank : (x + 1) % p; };
      REQUIRE(shift(a.parent) == b.parent);
      REQUIRE(shift(a.children[0]) == b.children[0]);
      REQUIRE(shift(a.children[1]) == b.children[1]);
    }
  }
}

TEST_CASE("dbt: halves tile the buffer", "[pattern][tree][dbt]") {
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3},
                            std::size_t{1009}, std::size_t{1} << 20}) {
    const pattern::Span a = pattern::dbt_half(count, 0);
    const pattern::Span b = pattern::dbt_half(count, 1);
    CHECK(a.offset == 0);
    CHECK(b.offset == a.count);
    CHECK(a.count + b.count == count);
    CHECK(a.count == (count + 1) / 2);
  }
}

TEST_CASE("tree and dbt: pipelined reduce and broadcast reach every rank for p 1 to 64",
          "[pattern][tree][dbt][simulate]") {
  for (int p = 1; p <= kMaxRanks; ++p) {
    const auto up = static_cast<std::size_t>(p);
    for (std::size_t count :
         {std::size_t{0}, std::size_t{1}, std::size_t{2}, up - 1, up, std::size_t{1009}}) {
      for (std::size_t chunk_elems :
           {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{1000}}) {
        if (count > 100 && chunk_elems < 7) continue;  // thousands of rounds: covered below
        for (int n_trees : {1, 2}) {
          int rounds = 0;
          const std::string problem = simulate_trees(p, count, chunk_elems, n_trees, rounds);
          if (!problem.empty()) FAIL(problem);
          // The pipeline claim behind the cost model: chunks + 2 depth rounds.
          std::size_t chunks = 0;
          for (int t = 0; t < n_trees; ++t) {
            const pattern::Span s =
                n_trees == 1 ? pattern::Span{0, count} : pattern::dbt_half(count, t);
            chunks = std::max(chunks, pattern::chunk_count(s.count, chunk_elems));
          }
          const auto bound =
              chunks == 0 ? 0 : static_cast<int>(chunks) + 2 * pattern::tree_depth(p);
          if (rounds > bound) {
            FAIL("p=" << p << " count=" << count << " chunk_elems=" << chunk_elems
                      << " trees=" << n_trees << ": " << rounds << " rounds > " << bound);
          }
        }
      }
    }
  }
}

TEST_CASE("tree and dbt: many chunks and a count above the chunk", "[pattern][tree][dbt]") {
  for (int p : {1, 2, 3, 5, 8, 13, 31, 32, 33, 64}) {
    // Hundreds of one-element chunks; a few chunks of 4096, the last one short; many of 61.
    for (auto [count, chunk_elems] :
         {std::pair<std::size_t, std::size_t>{1009, 1}, {3 * 4096 + 5, 4096}, {3 * 4096 + 5, 61}}) {
      for (int n_trees : {1, 2}) {
        int rounds = 0;
        const std::string problem = simulate_trees(p, count, chunk_elems, n_trees, rounds);
        if (!problem.empty()) FAIL(problem);
      }
    }
  }
}

TEST_CASE("tree and dbt: cost formulas reach their small and large message limits",
          "[tree][dbt][cost]") {
  using ibscope::collectives::LinkCost;
  const LinkCost alpha_only{1e-6, 0, 0};
  const LinkCost beta_only{0, 1e-10, 0};
  const LinkCost gamma_only{0, 0, 1e-10};
  for (int p = 1; p <= kMaxRanks; ++p) {
    INFO("p=" << p);
    const double d = pattern::tree_depth(p);
    if (p == 1) {
      CHECK(ibscope::collectives::tree_allreduce_cost_s(beta_only, 1e9, p) == 0);
      CHECK(ibscope::collectives::dbt_allreduce_cost_s(beta_only, 1e9, p) == 0);
      continue;
    }
    // One chunk: 2 depth messages.
    CHECK(ibscope::collectives::tree_allreduce_cost_s(alpha_only, 8, p) == Approx(2 * d * 1e-6));
    CHECK(ibscope::collectives::dbt_allreduce_cost_s(alpha_only, 8, p) == Approx(2 * d * 1e-6));
    // Many chunks: the busiest rank's bytes each way, 3n (tree, p >= 4) and 2n (dbt, p >= 4).
    const double n = 1e12;
    const double tree_beta =
        ibscope::collectives::tree_allreduce_cost_s(beta_only, n, p) / (n * 1e-10);
    const double dbt_beta =
        ibscope::collectives::dbt_allreduce_cost_s(beta_only, n, p) / (n * 1e-10);
    CHECK(tree_beta == Approx(p >= 4 ? 3.0 : p - 1.0).epsilon(1e-3));
    CHECK(dbt_beta == Approx(p >= 4 ? 2.0 : p / 2.0).epsilon(1e-3));
    CHECK(ibscope::collectives::tree_allreduce_cost_s(gamma_only, n, p) / (n * 1e-10) ==
          Approx(std::min(2, p - 1)).epsilon(1e-3));
    CHECK(ibscope::collectives::dbt_allreduce_cost_s(gamma_only, n, p) / (n * 1e-10) ==
          Approx(std::min(2, p - 1) / 2.0).epsilon(1e-3));
    // Smaller chunks cost more messages.
    CHECK(ibscope::collectives::tree_allreduce_chunked_cost_s(alpha_only, 1e8, p, 4096) >
          ibscope::collectives::tree_allreduce_chunked_cost_s(alpha_only, 1e8, p, 1 << 20));
  }
}
