#pragma once
/// All-to-all-v counts: how many elements each rank sends to each other rank, as pure math
/// (no I/O, no communication). A counts spec is a generator or a matrix of weights; scaled to a
/// size, it gives every rank the same integer matrix, computed locally from the spec (the
/// generators' rows are all the same row, so a rank needs O(p) work and memory for its own row,
/// column and the senders' offsets; a matrix from a file is p x p anyway).
///
/// Specs (`--counts`, docs/methodology.md "All-to-all-v"):
///   uniform          every destination gets the same share (remainders to the lowest ranks)
///   zipf:S[:seed]    Zipf-skewed like routed MoE tokens: destination popularity is a seeded
///                    permutation pi of the ranks, the same on every sender (hot experts), and
///                    each sender gives destination pi[k] a share proportional to 1/(k+1)^S
///   a file           p rows of p non-negative numbers (counts or relative weights): row s is
///                    what rank s sends to ranks 0..p-1 (alltoallv_counts_file.hpp)
///
/// Scaling to `mean_count` elements per rank: the matrix is scaled so that its total is
/// mean_count x p exactly; each entry is the floor of its exact share, and the elements left
/// over go one each to the entries with the largest remainders (ties: the lower row, then the
/// lower column). A generator scales each row to mean_count on its own, so every rank sends
/// exactly mean_count elements.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ibscope::collectives {

struct CountsSpec {
  enum class Kind { kUniform, kZipf, kMatrix };
  Kind kind = Kind::kUniform;
  double zipf_exponent = 0;     ///< S of zipf:S (>= 0)
  std::uint64_t seed = 1;       ///< zipf's permutation seed
  int matrix_ranks = 0;         ///< kMatrix: p
  std::vector<double> weights;  ///< kMatrix: p x p, row-major, row = sender
  std::string text;             ///< as given: "uniform", "zipf:1.2:7", or the file's path
};

/// Parses a generator: "uniform" or "zipf:S[:seed]". Throws UsageError (naming --counts and the
/// grammar) for a malformed one. Anything else is not a generator: is_counts_generator().
CountsSpec parse_counts_generator(std::string_view text);
/// Whether `text` names a generator (uniform, zipf:...) rather than a file.
bool is_counts_generator(std::string_view text) noexcept;

/// Max over mean of what a call moves, as the rows report it (1 for perfect balance; 1 when
/// nothing moves).
struct CountsImbalance {
  double send_max_over_mean = 1;  ///< of the per-rank bytes sent
  double recv_max_over_mean = 1;  ///< of the per-rank bytes received
  double pair_max_over_mean = 1;  ///< of the bytes of the p x p ordered pairs (self included)
};

/// The integer counts matrix of a spec over `ranks` ranks scaled to `mean_count` elements per
/// rank. Throws UsageError when a matrix spec has another number of ranks than the job.
class CountsMatrix {
 public:
  CountsMatrix(const CountsSpec& spec, int ranks, std::size_t mean_count);

  int ranks() const noexcept { return ranks_; }
  /// Elements rank `from` sends to rank `to`.
  std::size_t at(int from, int to) const noexcept;
  /// Elements rank `from` sends to every rank.
  std::span<const std::size_t> row(int from) const noexcept;
  /// Elements all ranks send together (mean_count x ranks).
  std::size_t total() const noexcept { return total_; }
  /// The largest of what one rank sends or receives: the elements its buffers must hold.
  std::size_t max_rank_count() const;
  CountsImbalance imbalance() const;

 private:
  int ranks_;
  bool shared_row_;  // every row is rows_[0..ranks) (generators)
  std::size_t total_;
  std::vector<std::size_t> rows_;
};

/// One rank's call: element counts and offsets into its packed send and receive buffers.
struct AlltoallvPlan {
  std::vector<std::size_t> send_counts, send_offsets;  ///< by destination
  std::vector<std::size_t> recv_counts, recv_offsets;  ///< by source
  /// By source: where the source's block for this rank starts in the source's send buffer
  /// (verification: each element names its sender and its place there).
  std::vector<std::size_t> source_offsets;
  std::size_t send_total = 0, recv_total = 0;
  /// Every rank's counts: the matrix the plan was made from, for an algorithm that moves other
  /// ranks' blocks (hier gathers its local peers'); shared, read only. Null when the plan was
  /// made without one (make_alltoallv_plan alone; counts_call sets it).
  std::shared_ptr<const CountsMatrix> matrix;
};

/// Rank `rank`'s plan in `m`: O(p) for a generator, O(p^2) for a matrix.
AlltoallvPlan make_alltoallv_plan(const CountsMatrix& m, int rank);

/// Scales `weights` (all >= 0, not all 0) to integers that sum to `total`: floors of the exact
/// shares, the rest one each to the largest remainders (ties: the lower index).
std::vector<std::size_t> scale_to_total(std::span<const double> weights, std::size_t total);

}  // namespace ibscope::collectives
