#include "ibscope/bootstrap/pmix_bootstrap.hpp"

#include <fmt/format.h>
#include <pmix.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ibscope/bootstrap/netns_placement.hpp"
#include "ibscope/bootstrap/wire.hpp"
#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"

namespace ibscope::bootstrap {
namespace {

std::string pmix_error(std::string_view call, pmix_status_t rc) {
  return fmt::format("{} failed: {} ({})", call, PMIx_Error_string(rc), rc);
}

class PmixBootstrap final : public Bootstrap {
 public:
  static std::unique_ptr<Bootstrap> create(double timeout_s) {
    // IBSCOPE_NETNS: the mount namespace must be private before PMIx_Init starts its thread.
    // A failure here is reported after connecting, through the placement exchange.
    const std::string netns_template = netns_template_from_env();
    std::exception_ptr detach_error;
    if (!netns_template.empty()) {
      try {
        detach_mounts_for_netns();
      } catch (const Error&) {
        detach_error = std::current_exception();
      }
    }
    pmix_proc_t me{};
    const pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
      throw RemoteError(pmix_error("PMIx_Init (is a PMIx launcher running this job?)", rc));
    }
    std::unique_ptr<PmixBootstrap> boot;
    try {
      const int size = static_cast<int>(get_job_value(me, PMIX_JOB_SIZE).data.uint32);
      boot.reset(new PmixBootstrap(me, static_cast<int>(me.rank), size, timeout_s));
      log::set_identity(boot->rank(), local_hostname());  // errors before the exchange say who
    } catch (...) {
      PMIx_Finalize(nullptr, 0);  // the destructor finalizes from here on
      throw;
    }
    // Connected to the launcher: now the rank may leave its namespace (IBSCOPE_NETNS), before
    // the hostname exchange so that its host is named after the namespace it measures from.
    if (!netns_template.empty()) boot->place_into_netns(netns_template, detach_error);
    // Committed now, collected by the hostname exchange's fence.
    boot->put_value(kProcKey, process_identity());
    boot->discover_hosts();
    boot->find_same_machine_peers();
    return boot;
  }

  ~PmixBootstrap() override { PMIx_Finalize(nullptr, 0); }

  std::vector<Bytes> allgather(std::span<const std::byte> mine, std::string_view what) override {
    const std::string key = put_and_fence(mine, what);
    std::vector<int> all(static_cast<std::size_t>(size()));
    for (int r = 0; r < size(); ++r) all[static_cast<std::size_t>(r)] = r;
    return get_values(key, all, what);
  }

  /// The fence is PMIx's own data exchange (its servers move the blobs, not rank 0); only rank 0
  /// reads them.
  std::vector<Bytes> gather(std::span<const std::byte> mine, std::string_view what) override {
    const std::string key = put_and_fence(mine, what);
    if (rank() != 0) return {};
    std::vector<int> all(static_cast<std::size_t>(size()));
    for (int r = 0; r < size(); ++r) all[static_cast<std::size_t>(r)] = r;
    return get_values(key, all, what);
  }

  Bytes broadcast(std::span<const std::byte> mine, std::string_view what) override {
    const std::string key = put_and_fence(rank() == 0 ? mine : std::span<const std::byte>(), what);
    const int root = 0;
    return std::move(get_values(key, std::span(&root, 1), what).at(0));
  }

  void publish(std::string_view key, std::span<const std::byte> value) override {
    put_bytes(fmt::format("ibscope.kv.{}", key), value, key);
  }

  std::vector<Bytes> lookup(std::string_view key, std::span<const int> ranks,
                            std::string_view what) override {
    if (key == wire::kHostKey) {
      std::vector<Bytes> out;
      for (const int r : ranks) {
        const std::string& h = host(r);
        out.emplace_back(reinterpret_cast<const std::byte*>(h.data()),
                         reinterpret_cast<const std::byte*>(h.data()) + h.size());
      }
      return out;
    }
    return get_values(fmt::format("ibscope.kv.{}", key), ranks, what);
  }

  void barrier(std::string_view what) override {
    // A one-byte contribution: a rank lost before the fence is then the one whose key is
    // missing (put_and_fence).
    const std::byte here{1};
    (void)put_and_fence(std::span<const std::byte>(&here, 1), what);
  }

  /// Launchers kill the whole job about a second after a PMIx client dies and deliver no event
  /// to the others first, and UCX's shared-memory keepalive takes 20 s: so a survivor looks
  /// for itself. Peers on this machine (same boot and pid namespace) are gone when their
  /// process has ended (process_ended). Checked at most every kLivenessPeriod; cheap.
  void check_health() override {
    if (same_machine_pid_.empty()) return;
    const auto now = Clock::now();
    if (now < next_liveness_check_) return;
    next_liveness_check_ = now + kLivenessPeriod;
    if (const auto ended = ended_peers(); !ended.empty()) throw ended_peer_error(ended, "");
  }

  void abort_job(std::string_view reason) noexcept override {
    // A lost rank is already known to the launcher (its PMIx server lost the process), which
    // ends the job; aborting as well would kill the other survivors before they print their
    // own line naming it.
    if (launcher_lost_a_rank_) return;
    const std::string msg(reason);
    PMIx_Abort(1, msg.c_str(), nullptr, 0);
  }

  std::string_view kind() const noexcept override { return "pmix"; }

 private:
  PmixBootstrap(const pmix_proc_t& me, int rank, int size, double timeout_s)
      : Bootstrap(rank, size, timeout_s), me_(me) {}

  /// PMIx_Get of a job-level (or, with `rank`, a proc-level) value, copied out.
  static pmix_value_t get_job_value(const pmix_proc_t& me, const char* key,
                                    pmix_rank_t rank = PMIX_RANK_WILDCARD) {
    pmix_proc_t who{};
    PMIX_LOAD_PROCID(&who, me.nspace, rank);
    pmix_value_t* val = nullptr;
    const pmix_status_t rc = PMIx_Get(&who, key, nullptr, 0, &val);
    if (rc != PMIX_SUCCESS || val == nullptr) {
      throw RemoteError(pmix_error(fmt::format("PMIx_Get({})", key), rc));
    }
    const pmix_value_t out = *val;  // scalars only: no pointer survives the release
    PMIX_VALUE_RELEASE(val);
    return out;
  }

  /// Enters this rank's namespace and learns whether every other rank entered its own, so that
  /// a rank that could not move stops the job at once instead of leaving the others waiting in
  /// the hostname exchange. Throws this rank's own error, or names the first rank that failed.
  void place_into_netns(const std::string& tmpl, std::exception_ptr detach_error) {
    std::string status = "ok";
    std::exception_ptr mine;
    try {
      if (detach_error) std::rethrow_exception(detach_error);
      const int local_rank =
          static_cast<int>(get_job_value(me_, PMIX_LOCAL_RANK, me_.rank).data.uint16);
      place_rank_into_netns(tmpl, rank(), local_rank, size());
      log::set_identity(rank(), local_hostname());  // now named after its namespace
    } catch (const Error& e) {
      status = fmt::format("{}:{}", e.kind() == ErrorKind::kUsage ? 'u' : 'e', e.what());
      mine = std::current_exception();
    }
    const auto* p = reinterpret_cast<const std::byte*>(status.data());
    const auto all = allgather(std::span<const std::byte>(p, status.size()),
                               "network namespace placement (IBSCOPE_NETNS)");
    if (mine) std::rethrow_exception(mine);
    int failed = 0;
    int first = -1;
    std::string first_status;
    for (int r = 0; r < size(); ++r) {
      const Bytes& b = all[static_cast<std::size_t>(r)];
      std::string s(reinterpret_cast<const char*>(b.data()), b.size());
      if (s == "ok") continue;
      if (failed++ == 0) {
        first = r;
        first_status = std::move(s);
      }
    }
    if (failed == 0) return;
    const std::string msg =
        fmt::format("rank {} could not enter its network namespace{}: {}", first,
                    failed > 1 ? fmt::format(" (and {} more ranks)", failed - 1) : std::string(),
                    first_status.size() > 2 ? first_status.substr(2) : first_status);
    if (first_status.rfind("u:", 0) == 0) throw UsageError(msg);
    throw RemoteError(msg);
  }

  /// PMIx_Get of `key` from each of `ranks`, in order.
  std::vector<Bytes> get_values(const std::string& key, std::span<const int> ranks,
                                std::string_view what) {
    std::vector<Bytes> out(ranks.size());
    pmix_proc_t peer = me_;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      peer.rank = static_cast<pmix_rank_t>(ranks[i]);
      pmix_value_t* v = nullptr;
      const pmix_status_t rc = PMIx_Get(&peer, key.c_str(), nullptr, 0, &v);
      if (rc != PMIX_SUCCESS || v == nullptr) {
        throw RemoteError(fmt::format("bootstrap '{}': {} for rank {}", what,
                                      pmix_error("PMIx_Get", rc), ranks[i]));
      }
      if (v->type == PMIX_BYTE_OBJECT && v->data.bo.size > 0) {
        const auto* b = reinterpret_cast<const std::byte*>(v->data.bo.bytes);
        out[i].assign(b, b + v->data.bo.size);
      }
      PMIX_VALUE_RELEASE(v);
    }
    return out;
  }

  void put_bytes(const std::string& key, std::span<const std::byte> mine, std::string_view what) {
    pmix_value_t value{};
    value.type = PMIX_BYTE_OBJECT;
    // PMIx copies the value in PMIx_Put; the byte object only borrows our buffer here.
    value.data.bo.bytes = const_cast<char*>(reinterpret_cast<const char*>(mine.data()));
    value.data.bo.size = mine.size();
    check(PMIx_Put(PMIX_GLOBAL, key.c_str(), &value), "PMIx_Put", what);
    check(PMIx_Commit(), "PMIx_Commit", what);
  }

  /// Put + Commit of `mine` under a fresh key, then the fence. Returns the key. When the fence
  /// fails because the PMIx server lost a process (PARTIAL SUCCESS), the lost ranks are those
  /// whose key for this very fence is missing: their data never came, so they never got here.
  /// Launchers (Slurm's PMIx plugin, mpirun) deliver no event to the survivors before they kill
  /// the job, so this is how a survivor names the lost rank.
  std::string put_and_fence(std::span<const std::byte> mine, std::string_view what) {
    std::string key = fmt::format("ibscope.ag.{}", seq_++);
    put_bytes(key, mine, what);
    const pmix_status_t rc = fence(what);
    if (rc == PMIX_ERR_PARTIAL_SUCCESS) {
      // The server lost a process: the launcher knows and ends the job (abort_job stays quiet).
      launcher_lost_a_rank_ = true;
      if (const std::vector<int> lost = ranks_without(key); !lost.empty()) {
        std::string names;
        for (int r : lost) names += (names.empty() ? "" : ", ") + describe(r);
        throw RemoteError(fmt::format(
            "bootstrap '{}': lost {}: it never reached this point and the launcher's PMIx "
            "server lost its process ({}); the launcher ends the job",
            what, names, pmix_error("PMIx_Fence", rc)));
      }
    }
    if (rc != PMIX_SUCCESS) {
      // A rank that died inside the fence (its data already given) is still ours to name. The
      // server notices the closed connection while the process is still exiting, so give its
      // exit a moment to complete (the launcher's teardown comes about a second later).
      const Deadline settle(kSettleAfterFenceFailure_s);
      for (;;) {
        if (const auto ended = ended_peers(); !ended.empty()) {
          throw ended_peer_error(
              ended, fmt::format("bootstrap '{}': {}: ", what, pmix_error("PMIx_Fence", rc)));
        }
        if (same_machine_pid_.empty() || settle.expired()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    check(rc, "PMIx_Fence", what);
    return key;
  }

  /// Whether process `pid` of this machine has ended: gone, or a zombie not yet reaped by its
  /// launcher (kill(pid, 0) still succeeds on one).
  static bool process_ended(pid_t pid) {
    if (::kill(pid, 0) != 0) return errno == ESRCH;
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string stat;
    if (!std::getline(in, stat)) return true;  // reaped in between
    const auto paren = stat.rfind(')');        // "pid (comm) S ...": comm may hold spaces
    if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
    const char state = stat[paren + 2];
    return state == 'Z' || state == 'X';
  }

  /// The ranks on this machine whose process has ended.
  std::vector<int> ended_peers() const {
    std::vector<int> ended;
    for (int r = 0; r < static_cast<int>(same_machine_pid_.size()); ++r) {
      const pid_t pid = same_machine_pid_[static_cast<std::size_t>(r)];
      if (pid > 0 && process_ended(pid)) ended.push_back(r);
    }
    return ended;
  }

  /// The error naming `ended`, thrown after a short grace: this rank's own exit would otherwise
  /// look like a second loss to the survivors that have not looked yet.
  RemoteError ended_peer_error(const std::vector<int>& ended, std::string_view context) {
    launcher_lost_a_rank_ = true;
    std::string names;
    for (int r : ended) {
      names += fmt::format("{}{} (pid {})", names.empty() ? "" : ", ", describe(r),
                           same_machine_pid_[static_cast<std::size_t>(r)]);
    }
    std::this_thread::sleep_for(kGraceBeforeExit);
    return RemoteError(fmt::format(
        "{}lost {}: {} on this machine {} ended; the launcher ends the job", context, names,
        ended.size() == 1 ? "its process" : "their processes", ended.size() == 1 ? "has" : "have"));
  }

  /// Ranks whose `key` is not in this process's store. PMIX_OPTIONAL: look only locally, never
  /// ask the server (which would wait for a dead process's data).
  std::vector<int> ranks_without(const std::string& key) const {
    std::vector<int> missing;
    pmix_info_t optional;
    PMIX_INFO_CONSTRUCT(&optional);
    bool yes = true;
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_proc_t peer = me_;
    for (int r = 0; r < size(); ++r) {
      peer.rank = static_cast<pmix_rank_t>(r);
      pmix_value_t* v = nullptr;
      const pmix_status_t rc = PMIx_Get(&peer, key.c_str(), &optional, 1, &v);
      if (v != nullptr) PMIX_VALUE_RELEASE(v);
      if (rc == PMIX_ERR_NOT_FOUND) missing.push_back(r);
    }
    PMIX_INFO_DESTRUCT(&optional);
    return missing;
  }

  /// PMIx_Fence over the whole namespace with data collection and the job's deadline. Throws
  /// TimeoutError when it expires; returns any other status.
  pmix_status_t fence(std::string_view what) {
    pmix_info_t info[2];
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    bool collect = true;
    int timeout = static_cast<int>(std::ceil(timeout_s()));
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_proc_t all{};
    PMIX_LOAD_PROCID(&all, me_.nspace, PMIX_RANK_WILDCARD);
    const pmix_status_t rc = PMIx_Fence(&all, 1, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc == PMIX_ERR_TIMEOUT) {
      throw TimeoutError(fmt::format(
          "bootstrap '{}' timed out after {} s in PMIx_Fence (namespace {}): some rank never "
          "arrived; the launcher's job status names it",
          what, timeout, me_.nspace));
    }
    return rc;
  }

  void check(pmix_status_t rc, std::string_view call, std::string_view what) const {
    if (rc != PMIX_SUCCESS) {
      throw RemoteError(fmt::format("bootstrap '{}': {}", what, pmix_error(call, rc)));
    }
  }

  static constexpr const char* kProcKey = "ibscope.proc";
  static constexpr std::chrono::milliseconds kLivenessPeriod{50};
  static constexpr double kSettleAfterFenceFailure_s = 0.3;
  static constexpr std::chrono::milliseconds kGraceBeforeExit{4 * kLivenessPeriod};

  /// "<boot id> <pid namespace> <pid>": two ranks with the same first two fields can see each
  /// other's pid.
  static std::string process_identity() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string boot_id;
    std::getline(in, boot_id);
    struct stat st {};
    if (boot_id.empty() || ::stat("/proc/self/ns/pid", &st) != 0) return {};
    return fmt::format("{} {}:{} {}", boot_id, st.st_dev, st.st_ino, ::getpid());
  }

  void put_value(const char* key, const std::string& text) {
    pmix_value_t value{};
    value.type = PMIX_STRING;
    value.data.string = const_cast<char*>(text.c_str());  // PMIx_Put copies it
    check(PMIx_Put(PMIX_GLOBAL, key, &value), "PMIx_Put", key);
    check(PMIx_Commit(), "PMIx_Commit", key);
  }

  /// Reads every rank's process_identity(); keeps the pids of those on this machine.
  void find_same_machine_peers() {
    const std::string mine = process_identity();
    const auto last_space = mine.rfind(' ');
    if (mine.empty() || last_space == std::string::npos) return;
    const std::string machine = mine.substr(0, last_space + 1);
    std::vector<pid_t> pids(static_cast<std::size_t>(size()), 0);
    bool any = false;
    pmix_proc_t peer = me_;
    for (int r = 0; r < size(); ++r) {
      if (r == rank()) continue;
      peer.rank = static_cast<pmix_rank_t>(r);
      pmix_value_t* v = nullptr;
      const pmix_status_t rc = PMIx_Get(&peer, kProcKey, nullptr, 0, &v);
      if (rc == PMIX_SUCCESS && v != nullptr && v->type == PMIX_STRING &&
          v->data.string != nullptr) {
        const std::string id = v->data.string;
        if (id.size() > machine.size() && id.compare(0, machine.size(), machine) == 0) {
          pids[static_cast<std::size_t>(r)] =
              static_cast<pid_t>(std::strtol(id.c_str() + machine.size(), nullptr, 10));
          any = true;
        }
      }
      if (v != nullptr) PMIX_VALUE_RELEASE(v);
    }
    if (any) same_machine_pid_ = std::move(pids);
  }

  pmix_proc_t me_;
  std::uint64_t seq_ = 0;
  std::vector<pid_t> same_machine_pid_;  // by rank; 0: not on this machine (or self)
  Clock::time_point next_liveness_check_{};
  bool launcher_lost_a_rank_ = false;  // a fence or a liveness check saw a rank die
};

}  // namespace

std::unique_ptr<Bootstrap> make_pmix_bootstrap(double timeout_s) {
  return PmixBootstrap::create(timeout_s);
}

}  // namespace ibscope::bootstrap
