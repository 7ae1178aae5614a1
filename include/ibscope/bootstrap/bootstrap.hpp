#pragma once
/// Who am I, who are the others: the out-of-band channel every layer uses before (and
/// beside) the data transport. Implementations: TCP store (tcp_store.hpp), PMIx
/// (pmix_bootstrap.hpp), single process (rank 0 of 1). Choose one with bootstrap_from_env().
///
/// Every blocking call has a deadline (the job's --timeout). When it expires the call throws
/// TimeoutError naming the ranks, and their hosts, that never arrived. A rank that dies makes
/// every other rank's next bootstrap call (and check_health()) throw RemoteError naming it.
///
/// Scale (docs/scale.md): at 10,000+ ranks nothing a rank needs may cost the root O(n) bytes per
/// rank. allgather() is the only call that does (every rank gets every blob): use it only where
/// every rank needs every blob. Data only rank 0 uses goes through gather(); data a rank needs
/// from a few peers goes through publish() + barrier() + lookup(); a rank knows the hosts of
/// rank 0, of itself and of the peers it learned (learn_hosts()), and rank 0 knows them all.

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

/// The key under which each rank publishes its describe() detail (Bootstrap::publish_detail).
inline constexpr std::string_view kDetailKey = "ibscope.detail";

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
  /// How many distinct hosts the job spans.
  int host_count() const noexcept { return host_count_; }
  /// Hostname of a rank: always known for rank 0, for this rank and for the ranks learned with
  /// learn_hosts(); on rank 0 (and under PMIx or a single process) for every rank. "" where not
  /// known.
  const std::string& host(int rank) const { return hosts_.at(static_cast<std::size_t>(rank)); }
  /// By rank, size() entries; complete on rank 0 (see host()).
  const std::vector<std::string>& hosts() const noexcept { return hosts_; }
  /// Makes host(r) known for every r in `ranks` (one lookup for those not known yet).
  void learn_hosts(std::span<const int> ranks);
  /// "rank 3 (node17)", or with a rank's location detail "rank 3 (node17, nic mlx5_3:1)": how
  /// messages name a peer.
  std::string describe(int rank) const;
  /// One short detail per rank that describe() adds after the host (e.g. the rank's NIC; ""
  /// for none), for every rank (rank 0, which gathers them).
  void set_rank_details(std::vector<std::string> details);
  /// This rank's own detail, published so that the peers that learn its host (learn_hosts())
  /// learn it too. Call before a barrier (the UCX communicator's constructor has one), on every
  /// rank.
  void publish_detail(const std::string& detail);

  /// Every rank contributes `mine`; returns all contributions indexed by rank. `what` names the
  /// phase in error messages. Throws TimeoutError / RemoteError.
  virtual std::vector<Bytes> allgather(std::span<const std::byte> mine, std::string_view what) = 0;
  /// Rank 0 gets every rank's contribution, indexed by rank; the other ranks get an empty vector
  /// and do not wait for the others. Throws TimeoutError / RemoteError.
  virtual std::vector<Bytes> gather(std::span<const std::byte> mine, std::string_view what);
  /// Every rank gets rank 0's `mine` (the others' is ignored). Throws TimeoutError /
  /// RemoteError.
  virtual Bytes broadcast(std::span<const std::byte> mine, std::string_view what);
  /// All ranks reach this point. Throws TimeoutError / RemoteError.
  virtual void barrier(std::string_view what);
  /// Publishes this rank's `value` under `key` (at most wire::kMaxPutValueBytes). Other ranks
  /// read it with lookup() once a barrier() after the publish has completed.
  virtual void publish(std::string_view key, std::span<const std::byte> value) = 0;
  /// What `ranks` published under `key`, in the order of `ranks`. Throws RemoteError naming a
  /// rank that has not published it.
  virtual std::vector<Bytes> lookup(std::string_view key, std::span<const int> ranks,
                                    std::string_view what) = 0;
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
  /// Exchanges hostnames (an allgather) and derives local rank/size. Called once by
  /// implementations that have no cheaper way (set_layout).
  void discover_hosts();
  /// What discover_hosts() finds, from an implementation that learned it otherwise. `hosts` has
  /// size() entries, "" where not known.
  void set_layout(int local_rank, int local_size, int host_count, std::vector<std::string> hosts);

 private:
  int rank_;
  int size_;
  double timeout_s_;
  int local_rank_ = 0;
  int local_size_ = 1;
  int host_count_ = 1;
  std::vector<std::string> hosts_;
  std::vector<std::string> details_;  ///< per rank, or empty
  std::vector<bool> detail_known_;    ///< per rank, once details are published
  bool details_published_ = false;
};

/// Bootstrap of a single process (rank 0 of 1), used when there is no launcher and --np 1.
std::unique_ptr<Bootstrap> make_single_bootstrap(double timeout_s);

/// This host's name (gethostname, or the IBSCOPE_HOSTNAME override used by tests that emulate
/// hosts with network namespaces).
std::string local_hostname();

}  // namespace ibscope::bootstrap
