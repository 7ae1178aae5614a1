#pragma once
/// Who am I, who are the others: the out-of-band channel every layer uses before (and
/// beside) the data transport. Implementations: TCP store (tcp_store.hpp), PMIx
/// (pmix_bootstrap.hpp), single process (rank 0 of 1). Choose one with bootstrap_from_env().
///
/// Every blocking call has a deadline (the job's --timeout). When it expires the call throws
/// TimeoutError naming the ranks, and their hosts, that never arrived. A rank that dies makes
/// every other rank's next bootstrap call (and check_health()) throw RemoteError naming it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/core/error.hpp"

namespace ibscope::bootstrap {

using Bytes = std::vector<std::byte>;

/// Rank 0 is gone (its bootstrap connection closed without a goodbye): it cannot write the
/// results, so what it measured is only in its checkpoint (results/results_file.hpp).
class RootLostError : public RemoteError {
 public:
  using RemoteError::RemoteError;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  /// Rank among the ranks on the same host (by hostname), and how many there are.
  int local_rank() const noexcept { return local_rank_; }
  int local_size() const noexcept { return local_size_; }
  /// Hostname of any rank; hosts().size() == size().
  const std::string& host(int rank) const { return hosts_.at(static_cast<std::size_t>(rank)); }
  const std::vector<std::string>& hosts() const noexcept { return hosts_; }
  /// "rank 3 (node17)", or with a rank's location detail "rank 3 (node17, nic mlx5_3:1)": how
  /// messages name a peer.
  std::string describe(int rank) const;
  /// One short detail per rank that describe() adds after the host (e.g. the rank's NIC; ""
  /// for none). Every rank must pass the same list (it comes from an allgather).
  void set_rank_details(std::vector<std::string> details);

  /// Every rank contributes `mine`; returns all contributions indexed by rank. `what` names the
  /// phase in error messages. Throws TimeoutError / RemoteError.
  virtual std::vector<Bytes> allgather(std::span<const std::byte> mine, std::string_view what) = 0;
  /// All ranks reach this point. Throws TimeoutError / RemoteError.
  virtual void barrier(std::string_view what);
  /// Throws RemoteError if the job is known to be failing (a rank died or aborted). Cheap;
  /// called from transport wait loops.
  virtual void check_health() {}
  /// Tells the others this rank is failing, so that they stop instead of waiting. noexcept.
  virtual void abort_job(std::string_view reason) noexcept { (void)reason; }
  /// "tcp", "pmix" or "single".
  virtual std::string_view kind() const noexcept = 0;
  /// Deadline in seconds for each wait.
  double timeout_s() const noexcept { return timeout_s_; }

 protected:
  Bootstrap(int rank, int size, double timeout_s);
  /// Exchanges hostnames and derives local rank/size. Called once by implementations.
  void discover_hosts();

 private:
  int rank_;
  int size_;
  double timeout_s_;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::vector<std::string> hosts_;
  std::vector<std::string> details_;  ///< per rank, or empty
};

/// Bootstrap of a single process (rank 0 of 1), used when there is no launcher and --np 1.
std::unique_ptr<Bootstrap> make_single_bootstrap(double timeout_s);

/// This host's name (gethostname, or the IBSCOPE_HOSTNAME override used by tests that emulate
/// hosts with network namespaces).
std::string local_hostname();

}  // namespace ibscope::bootstrap
