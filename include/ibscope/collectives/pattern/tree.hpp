#pragma once
/// Binary-tree patterns: pure rank arithmetic, no I/O (unit-tested for every p in 1..64).
///
/// The in-order tree. Number the p ranks' places 1..p. Place q with lowest set bit h sits at
/// height log2(h) of an in-order binary tree: odd places are leaves; an even place q has the
/// left child q - h/2 and the right child q + h/2. The root is the largest power of two R <= p.
/// Places above p do not exist: a right subtree cut by p is replaced by its largest remaining
/// node (q + g for the largest power of two g < h/2 with q + g <= p), so every even place keeps
/// its left child and is interior, every odd place is a leaf. Depth (edges from the root to the
/// deepest leaf) = floor(log2 p): place 1 is log2 R levels below the root and cutting a subtree
/// only shortens paths.
///
/// Tree 0 puts rank r at place r + 1: its interior ranks are the odd ones (p even: p/2 of
/// them; p odd: (p-1)/2), its root rank R - 1.
///
/// Tree 1 (double binary tree, Sanders, Speck and Traeff 2009) is tree 0 shifted by one rank:
/// rank r sits at place ((r + 1) mod p) + 1, i.e. it plays the role rank (r + 1) mod p has in
/// tree 0. The shift flips the parity of every place except at the wrap, and the wrap (rank
/// p - 1) lands on place 1, a leaf. So tree 1's interior ranks are the even ranks below p - 1:
/// the interior sets of the two trees are disjoint, and for p > 2 every rank is a leaf in at
/// least one tree (p even: exactly one; p odd: rank p - 1 is a leaf in both). This works for
/// odd and even p alike, so no mirror case is needed. For p == 2 each tree is one edge, rooted
/// at rank 1 (tree 0) and rank 0 (tree 1); for p == 1 both trees are the single rank 0.

#include <cstddef>

#include "ibscope/collectives/pattern/ring.hpp"

namespace ibscope::collectives::pattern {

inline constexpr int kNoRank = -1;

/// One rank's links in one tree. children[0] (when present) is the left child, children[1]
/// the right one; a rank with one child always has it in children[0].
struct TreeNode {
  int parent = kNoRank;  ///< kNoRank for the root
  int children[2] = {kNoRank, kNoRank};
  int child_count() const noexcept {
    return (children[0] != kNoRank ? 1 : 0) + (children[1] != kNoRank ? 1 : 0);
  }
  bool is_root() const noexcept { return parent == kNoRank; }
  bool is_leaf() const noexcept { return child_count() == 0; }
};

/// The in-order tree over places 1..p (see above): parent place (0 for the root) and children
/// places (0 when absent). Requires 1 <= q <= p.
int inorder_parent(int q, int p) noexcept;
void inorder_children(int q, int p, int children[2]) noexcept;

/// Depth of both trees: floor(log2 p) (0 for p == 1).
int tree_depth(int p) noexcept;

/// Tree 0, the plain binary tree used by the `tree` all-reduce.
int btree_root(int p) noexcept;
TreeNode btree_node(int rank, int p) noexcept;

/// Tree `tree` (0 or 1) of the double binary tree used by `dbt`. Tree 0 is btree_*.
int dbt_root(int tree, int p) noexcept;
TreeNode dbt_node(int tree, int rank, int p) noexcept;
/// The part of a `count`-element buffer tree `tree` (0 or 1) carries: the first
/// ceil(count/2) elements for tree 0, the rest for tree 1.
Span dbt_half(std::size_t count, int tree) noexcept;

}  // namespace ibscope::collectives::pattern
