#include "ibscope/bootstrap/pmix_bootstrap.hpp"

#include <fmt/format.h>
#include <pmix.h>

#include <cmath>
#include <cstring>

#include "ibscope/core/error.hpp"

namespace ibscope {
namespace {

std::string pmix_error(std::string_view call, pmix_status_t rc) {
  return fmt::format("{} failed: {} ({})", call, PMIx_Error_string(rc), rc);
}

class PmixBootstrap final : public Bootstrap {
 public:
  static std::unique_ptr<Bootstrap> create(double timeout_s) {
    pmix_proc_t me{};
    const pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
      throw RemoteError(pmix_error("PMIx_Init (is a PMIx launcher running this job?)", rc));
    }
    try {
      pmix_proc_t wildcard{};
      PMIX_LOAD_PROCID(&wildcard, me.nspace, PMIX_RANK_WILDCARD);
      pmix_value_t* val = nullptr;
      const pmix_status_t grc = PMIx_Get(&wildcard, PMIX_JOB_SIZE, nullptr, 0, &val);
      if (grc != PMIX_SUCCESS || val == nullptr) {
        throw RemoteError(pmix_error("PMIx_Get(PMIX_JOB_SIZE)", grc));
      }
      const auto size = static_cast<int>(val->data.uint32);
      PMIX_VALUE_RELEASE(val);
      return std::unique_ptr<Bootstrap>(
          new PmixBootstrap(me, static_cast<int>(me.rank), size, timeout_s));
    } catch (...) {
      PMIx_Finalize(nullptr, 0);
      throw;
    }
  }

  ~PmixBootstrap() override { PMIx_Finalize(nullptr, 0); }

  std::vector<Bytes> allgather(std::span<const std::byte> mine, std::string_view what) override {
    const std::string key = fmt::format("ibscope.ag.{}", seq_++);
    pmix_value_t value{};
    value.type = PMIX_BYTE_OBJECT;
    // PMIx copies the value in PMIx_Put; the byte object only borrows our buffer here.
    value.data.bo.bytes = const_cast<char*>(reinterpret_cast<const char*>(mine.data()));
    value.data.bo.size = mine.size();
    check(PMIx_Put(PMIX_GLOBAL, key.c_str(), &value), "PMIx_Put", what);
    check(PMIx_Commit(), "PMIx_Commit", what);
    fence(what);

    std::vector<Bytes> out(static_cast<std::size_t>(size()));
    pmix_proc_t peer = me_;
    for (int r = 0; r < size(); ++r) {
      peer.rank = static_cast<pmix_rank_t>(r);
      pmix_value_t* v = nullptr;
      const pmix_status_t rc = PMIx_Get(&peer, key.c_str(), nullptr, 0, &v);
      if (rc != PMIX_SUCCESS || v == nullptr) {
        throw RemoteError(fmt::format("bootstrap '{}': {} for rank {}", what,
                                      pmix_error("PMIx_Get", rc), r));
      }
      if (v->type == PMIX_BYTE_OBJECT && v->data.bo.size > 0) {
        const auto* b = reinterpret_cast<const std::byte*>(v->data.bo.bytes);
        out[static_cast<std::size_t>(r)].assign(b, b + v->data.bo.size);
      }
      PMIX_VALUE_RELEASE(v);
    }
    return out;
  }

  void barrier(std::string_view what) override { fence(what); }

  void abort_job(std::string_view reason) noexcept override {
    const std::string msg(reason);
    PMIx_Abort(1, msg.c_str(), nullptr, 0);
  }

  std::string_view kind() const noexcept override { return "pmix"; }

 private:
  PmixBootstrap(const pmix_proc_t& me, int rank, int size, double timeout_s)
      : Bootstrap(rank, size, timeout_s), me_(me) {
    discover_hosts();
  }

  void fence(std::string_view what) {
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
    check(rc, "PMIx_Fence", what);
  }

  void check(pmix_status_t rc, std::string_view call, std::string_view what) const {
    if (rc != PMIX_SUCCESS) {
      throw RemoteError(fmt::format("bootstrap '{}': {}", what, pmix_error(call, rc)));
    }
  }

  pmix_proc_t me_;
  std::uint64_t seq_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_pmix_bootstrap(double timeout_s) {
  return PmixBootstrap::create(timeout_s);
}

}  // namespace ibscope
