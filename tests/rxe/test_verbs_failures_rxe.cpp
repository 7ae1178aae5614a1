// Failure paths of the verbs layer on a real device, with failures injected through the one
// Api layer below the real implementation (ENOMEM on the Nth ibv_reg_mr, a refused
// ibv_modify_qp, a bad work completion), plus a real remote access error from a wrong rkey.
// Each must surface as one error naming the call, the device, the peer and errno or the
// completion status.

#include <infiniband/verbs.h>

#include <cerrno>
#include <memory>

#include "ibscope/core/error.hpp"
#include "ibscope/probes/engines.hpp"
#include "ibscope/probes/rc_link.hpp"
#include "ibscope/transport/verbs/api.hpp"
#include "ibscope/transport/verbs/device.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"
#include "rxe_env.hpp"

namespace rxe = ibscope::test::rxe;
using namespace ibscope;
using namespace ibscope::probes;

namespace {

// Delegates to libibverbs, failing only what a test asks for.
class FailingApi : public verbs::Api {
 public:
  int fail_reg_mr_call = 0;           // 1-based; 0: never
  int fail_modify_to_state = -1;      // an ibv_qp_state; -1: never
  int corrupt_completion_status = 0;  // an ibv_wc_status; 0: leave completions alone
  int reg_mr_calls = 0;

  ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t length, int access) override {
    if (++reg_mr_calls == fail_reg_mr_call) {
      errno = ENOMEM;
      return nullptr;
    }
    return Api::reg_mr(pd, addr, length, access);
  }
  int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) override {
    if ((mask & IBV_QP_STATE) != 0 && static_cast<int>(attr->qp_state) == fail_modify_to_state) {
      return EINVAL;
    }
    return Api::modify_qp(qp, attr, mask);
  }
  int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) override {
    const int got = Api::poll_cq(cq, n, wc);
    if (got > 0 && corrupt_completion_status != 0) {
      wc[0].status = static_cast<ibv_wc_status>(corrupt_completion_status);
    }
    return got;
  }
};

struct Port {
  std::shared_ptr<verbs::DeviceContext> device;
  verbs::PortInfo info;
  int gid = -1;
};

Port open_port(const std::string& name) {
  Port p;
  p.device = verbs::DeviceContext::open(name);
  p.info = p.device->require_active_port(1);
  p.gid = static_cast<int>(verbs::choose_gid_index(p.info).value());
  return p;
}

LinkConfig small_config() {
  LinkConfig c;
  c.qps = 1;
  c.tx_depth = 16;
  c.buffer_bytes = 4096;
  return c;
}

void connect_pair(RcLink& a, RcLink& b) {
  const auto addr_a = a.addresses();
  const auto addr_b = b.addresses();
  a.connect(addr_b, verbs::QpTuning{}, verbs::peer_label(1, "b"));
  b.connect(addr_a, verbs::QpTuning{}, verbs::peer_label(0, "a"));
}

StreamSpec small_stream() {
  StreamSpec spec;
  spec.verb = Verb::kWrite;
  spec.size_bytes = 1024;
  spec.messages_per_qp = 8;
  spec.signal_every = 4;
  return spec;
}

}  // namespace

TEST_CASE("an injected ENOMEM from ibv_reg_mr names the call the device and the size",
          "[rxe][failure]") {
  rxe::require_guest();
  const Port port = open_port(rxe::devices()[0]);
  FailingApi failing;
  failing.fail_reg_mr_call = 2;
  verbs::ScopedApi scope(failing);
  try {
    RcLink link(port.device, port.info, port.gid, small_config());
    FAIL("RcLink was created although ibv_reg_mr failed");
  } catch (const verbs::VerbsError& e) {
    CHECK(e.call() == "ibv_reg_mr");
    CHECK(e.errno_value() == ENOMEM);
    CHECK_THAT(std::string(e.what()), Catch::Contains("ibv_reg_mr on " + rxe::devices()[0]) &&
                                          Catch::Contains("Cannot allocate memory (errno 12)"));
  }
  CHECK(failing.reg_mr_calls == 2);  // the first registration was undone by its RAII owner
}

TEST_CASE("a refused transition to RTR names the state the QP and the peer", "[rxe][failure]") {
  rxe::require_guest();
  const Port a = open_port(rxe::devices()[0]);
  const Port b = open_port(rxe::devices()[1]);
  RcLink link_a(a.device, a.info, a.gid, small_config());
  RcLink link_b(b.device, b.info, b.gid, small_config());
  FailingApi failing;
  failing.fail_modify_to_state = IBV_QPS_RTR;
  verbs::ScopedApi scope(failing);
  CHECK_THROWS_WITH(
      link_a.connect(link_b.addresses(), verbs::QpTuning{}, verbs::peer_label(1, "hostb")),
      Catch::Contains("ibv_modify_qp(RTR) on " + rxe::devices()[0]) &&
          Catch::Contains("towards peer rank 1 (host hostb)") &&
          Catch::Contains("Invalid argument (errno 22)"));
}

TEST_CASE("an injected bad work completion stops the stream with its status", "[rxe][failure]") {
  rxe::require_guest();
  const Port a = open_port(rxe::devices()[0]);
  const Port b = open_port(rxe::devices()[1]);
  RcLink link_a(a.device, a.info, a.gid, small_config());
  RcLink link_b(b.device, b.info, b.gid, small_config());
  connect_pair(link_a, link_b);
  {
    // Without injection the same stream completes: the failure below is the injected one.
    ProgressGuard guard(nullptr, 30, "clean stream");
    const StreamResult ok = run_stream(link_a, small_stream(), guard);
    CHECK(ok.messages == 8);
  }
  FailingApi failing;
  failing.corrupt_completion_status = IBV_WC_RETRY_EXC_ERR;
  verbs::ScopedApi scope(failing);
  ProgressGuard guard(nullptr, 30, "injected stream");
  try {
    run_stream(link_a, small_stream(), guard);
    FAIL("the stream ignored a failed completion");
  } catch (const verbs::CompletionError& e) {
    CHECK(e.status() == IBV_WC_RETRY_EXC_ERR);
    CHECK_THAT(std::string(e.what()),
               Catch::Contains("work completion error on " + rxe::devices()[0]) &&
                   Catch::Contains("towards peer rank 1 (host b)") &&
                   Catch::Contains("transport retry counter exceeded") &&
                   Catch::Contains("posted RDMA_WRITE"));
  }
}

TEST_CASE("a real remote access error from a wrong rkey is reported", "[rxe][failure]") {
  rxe::require_guest();
  const Port a = open_port(rxe::devices()[0]);
  const Port b = open_port(rxe::devices()[1]);
  RcLink link_a(a.device, a.info, a.gid, small_config());
  RcLink link_b(b.device, b.info, b.gid, small_config());
  auto addr_b = link_b.addresses();
  addr_b[0].rkey ^= 0x5a5a00;  // a key the peer never issued
  link_a.connect(addr_b, verbs::QpTuning{}, verbs::peer_label(1, "b"));
  link_b.connect(link_a.addresses(), verbs::QpTuning{}, verbs::peer_label(0, "a"));
  ProgressGuard guard(nullptr, 30, "wrong rkey");
  CHECK_THROWS_WITH(run_stream(link_a, small_stream(), guard),
                    Catch::Contains("remote access error") && Catch::Contains("RDMA_WRITE"));
}

TEST_CASE("kernel devices without a user-space device list name the provider package",
          "[rxe][failure]") {
  rxe::require_guest();
  // The kernel lists rxe0/rxe1 in /sys/class/infiniband; libibverbs is made to list none, as
  // when ibverbs-providers is missing or ib_uverbs is not loaded.
  class NoDevices : public verbs::Api {
   public:
    ibv_device** get_device_list(int* n) override {
      *n = 0;
      return nullptr;
    }
  } none;
  verbs::ScopedApi scope(none);
  CHECK_THROWS_WITH(verbs::DeviceContext::open(""),
                    Catch::Contains("the kernel has RDMA device(s) " + rxe::devices()[0]) &&
                        Catch::Contains("ibverbs-providers") && Catch::Contains("ib_uverbs"));
}
