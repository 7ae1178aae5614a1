#pragma once
/// Console reporters: the context banner and the nccl-tests style tables. Everything goes to
/// stdout through fmt; units are in every column header.

#include <cstdio>
#include <string>
#include <vector>

#include "ibscope/measure/records.hpp"

namespace ibscope::output {

struct BannerInfo {
  std::string command;
  int ranks = 0;
  std::string bootstrap;
  std::vector<std::string> hosts;       ///< one per rank
  std::vector<std::string> rank_rails;  ///< per rank, "" or "nic rxe0:1, NUMA 0 (bound)"
  std::vector<std::string> ucx_notes;   ///< UCX variables ibscope set for the job, and why
  std::string ucx_version;              ///< empty when the job does not use UCX
  std::vector<std::string> transports;  ///< distinct "peer-pair: transports" summaries
  std::string build;
  std::vector<std::string> warnings;
};

void print_banner(std::FILE* out, const BannerInfo& info);

/// nccl-tests layout: size, count, type, redop, algo, then time/algbw/busbw/#wrong for
/// out-of-place and in-place.
class CollectiveTable {
 public:
  /// `imbalance`: one more column, the rows' send/recv/pair imbalance (all-to-all-v).
  explicit CollectiveTable(std::FILE* out, bool imbalance = false)
      : out_(out), imbalance_(imbalance) {}
  void header();
  void rows(const std::vector<measure::CollectiveRow>& rows);
  /// Average bus bandwidth line (as nccl-tests' "Avg bus bandwidth").
  void footer();

 private:
  std::FILE* out_;
  bool imbalance_ = false;
  double busbw_sum_ = 0;
  int busbw_n_ = 0;
  std::uint64_t wrong_total_ = 0;
};

class P2pTable {
 public:
  explicit P2pTable(std::FILE* out) : out_(out) {}
  void rows(const std::vector<measure::P2pRow>& rows);

 private:
  void pattern_row(const measure::P2pRow& row);

  std::FILE* out_;
  std::string last_test_;
};

}  // namespace ibscope::output
