#include "ibscope/collectives/pattern/tree.hpp"

#include <bit>

namespace ibscope::collectives::pattern {
namespace {

int lowest_bit(int q) noexcept { return q & -q; }
int root_place(int p) noexcept {
  return static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
}

// Rank <-> place in tree `tree` (0: r + 1; 1: shifted by one rank).
int place_of(int tree, int rank, int p) noexcept {
  return tree == 0 ? rank + 1 : (rank + 1) % p + 1;
}
int rank_at(int tree, int place, int p) noexcept {
  if (place == 0) return kNoRank;
  return tree == 0 ? place - 1 : (place + p - 2) % p;
}

}  // namespace

int inorder_parent(int q, int p) noexcept {
  if (q == root_place(p)) return 0;
  int h = lowest_bit(q);
  // In the unbounded in-order tree, q's parent is q - h when q is a right child (bit 2h set),
  // q + h when it is a left child. A missing parent (> p) was cut away, and q took its place
  // under the grandparent: climb until the parent exists. A right child's parent is below q,
  // so it always exists.
  while (true) {
    if ((q & (2 * h)) != 0) return q - h;
    if (q + h <= p) return q + h;
    q += h;
    h *= 2;
  }
}

void inorder_children(int q, int p, int children[2]) noexcept {
  children[0] = children[1] = 0;
  const int h = lowest_bit(q);
  if (h == 1) return;
  children[0] = q - h / 2;
  // The right subtree spans (q, q + h) cut at p; its root is the largest remaining place.
  for (int g = h / 2; g >= 1; g /= 2) {
    if (q + g <= p) {
      children[1] = q + g;
      return;
    }
  }
}

int tree_depth(int p) noexcept { return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p)) - 1; }

int btree_root(int p) noexcept { return dbt_root(0, p); }
TreeNode btree_node(int rank, int p) noexcept { return dbt_node(0, rank, p); }

int dbt_root(int tree, int p) noexcept { return rank_at(tree, root_place(p), p); }

TreeNode dbt_node(int tree, int rank, int p) noexcept {
  const int q = place_of(tree, rank, p);
  TreeNode node;
  node.parent = rank_at(tree, inorder_parent(q, p), p);
  int children[2];
  inorder_children(q, p, children);
  node.children[0] = rank_at(tree, children[0], p);
  node.children[1] = rank_at(tree, children[1], p);
  return node;
}

Span dbt_half(std::size_t count, int tree) noexcept { return ring_segment(count, 2, tree); }

}  // namespace ibscope::collectives::pattern
