#include "ibscope/transport/ucx/comm.hpp"

#include <fmt/format.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <utility>

#include "ibscope/core/error.hpp"
#include "ibscope/core/interrupt.hpp"
#include "ibscope/core/log.hpp"
#include "ibscope/topo/cpu.hpp"
#include "ibscope/transport/ucx/staged_transfer.hpp"

namespace ibscope::ucx {

bool Comm::test(Request& request) {
  void* const handle = request.handle();
  if (request.flavor() == kStaged) {
    auto* staged = static_cast<StagedTransfer*>(handle);
    if (!staged->advance()) return false;
    request.clear();
    delete staged;
    return true;
  }
  const ucs_status_t st = ucp_request_check_status(handle);
  if (st == UCS_INPROGRESS) return false;
  ucp_request_free(handle);
  request.clear();
  if (st != UCS_OK) throw_peer_error(request.peer(), st, request.is_send() ? "send" : "receive");
  return true;
}

void Comm::release(Request& request) noexcept {
  void* const handle = request.handle();
  request.clear();
  if (request.flavor() == kStaged) {
    delete static_cast<StagedTransfer*>(handle);
    return;
  }
  // Still pending (an error path). A receive is cancelled first: its buffer may be freed right
  // after this. UCX releases the request when it completes or is cancelled.
  if (!request.is_send() && ucp_request_check_status(handle) == UCS_INPROGRESS) {
    ucp_request_cancel(worker_->get(), handle);
  }
  ucp_request_free(handle);
}

bool peer_error_handling_everywhere() {
  const char* v = std::getenv("IBSCOPE_UCX_ERR_MODE");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "peer") return true;
  if (std::string_view(v) == "cma") return false;
  throw UsageError(fmt::format("IBSCOPE_UCX_ERR_MODE='{}': expected peer or cma", v));
}

namespace {

// IBSCOPE_YIELD_WHEN_IDLE=1|0 overrides; by default ranks yield only when this host runs more
// ranks than this process may use CPU threads.
bool decide_yield_when_idle(const bootstrap::Bootstrap& bootstrap) {
  if (const char* v = std::getenv("IBSCOPE_YIELD_WHEN_IDLE"); v != nullptr && *v != '\0') {
    if (std::string_view(v) == "1") return true;
    if (std::string_view(v) == "0") return false;
    throw UsageError(fmt::format("IBSCOPE_YIELD_WHEN_IDLE='{}': expected 0 or 1", v));
  }
  const int threads = topo::read_cpu_info().allowed_threads;
  return threads > 0 && bootstrap.local_size() > threads;
}

}  // namespace

namespace {

// Each Comm publishes its worker's address under its own key: every rank creates its Comms in
// the same order (the constructor is collective), so the n-th Comm of every rank shares a key.
std::atomic<int> comms_created{0};

}  // namespace

Comm::Comm(bootstrap::Bootstrap& bootstrap)
    : transport::Comm(bootstrap),
      address_key_(fmt::format("ucx.address.{}", comms_created++)),
      yield_when_idle_(decide_yield_when_idle(bootstrap)),
      always_peer_mode_(peer_error_handling_everywhere()) {
  context_ = std::make_shared<Context>(static_cast<std::size_t>(bootstrap.size()));
  worker_ = std::make_shared<Worker>(context_);
  endpoints_.resize(static_cast<std::size_t>(size()));
  // Addresses are published, not exchanged: a rank fetches those of the peers it talks to when
  // it first does (connect()), so a ring connects 2 peers and a tree 3, not n - 1, and the
  // root's store sends O(n) bytes in all rather than n addresses to each of n ranks.
  bootstrap.publish(address_key_, worker_->address());
  bootstrap.barrier("UCX worker addresses published");
}

void Comm::connect(std::span<const int> peers) {
  std::vector<int> missing;
  for (const int r : peers) {
    if (r < 0 || r >= size()) throw UsageError(fmt::format("connect: no rank {}", r));
    if (r == rank() || endpoints_[static_cast<std::size_t>(r)]) continue;
    if (std::find(missing.begin(), missing.end(), r) == missing.end()) missing.push_back(r);
  }
  if (missing.empty()) return;
  bootstrap().learn_hosts(missing);
  const auto addresses = bootstrap().lookup(address_key_, missing, "UCX worker addresses");
  for (std::size_t i = 0; i < missing.size(); ++i) {
    const int r = missing[i];
    // Every peer gets UCX's peer failure detection by default. UCX 1.13 then offers same-host
    // peers shared memory (posix/sysv, with UCX_MM_ERROR_HANDLING) but not cma, which lacks RMA
    // invalidation. IBSCOPE_UCX_ERR_MODE=cma drops error handling for same-host peers so that
    // UCX may pick cma's single copy; on this project's 2-core VM that was 2.5x slower from
    // 4 MiB up (process_vm_readv per chunk), hence not the default. Same-host deaths are also
    // caught by the bootstrap (the store connection closes) and by the deadlines.
    const bool peer_mode = always_peer_mode_ || bootstrap().host(r) != bootstrap().host(rank());
    try {
      endpoints_[static_cast<std::size_t>(r)] =
          std::make_unique<Endpoint>(worker_, r, addresses[i], peer_mode);
    } catch (const Error& e) {
      throw Error(e.kind(), fmt::format("{} [rank {} is on {}]", e.what(), r, bootstrap().host(r)));
    }
    ++connected_;
  }
}

bool Comm::connected(int peer) const {
  return endpoints_.at(static_cast<std::size_t>(peer)) != nullptr;
}

Comm::~Comm() {
  // Not closed cleanly (an error path): operations may still be outstanding, so force-close,
  // which cancels them, before the worker goes away.
  for (auto& ep : endpoints_) {
    if (ep) ep->close(1.0, true);
  }
}

void Comm::close() {
  if (log::level() <= log::Level::kDebug) {
    std::string peers;
    for (int r = 0; r < size(); ++r) {
      if (endpoints_[static_cast<std::size_t>(r)])
        peers += fmt::format("{}{}", peers.empty() ? "" : ",", r);
    }
    log::debug("UCX endpoints: connected {} of {} peers ({})", connected_, size() - 1, peers);
  }
  bootstrap().barrier("UCX teardown");
  for (auto& ep : endpoints_) {
    if (ep) ep->close(bootstrap().timeout_s(), false);
  }
}

namespace {

ucp_request_param_t make_param(ucp_mem* memh) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(1);
  if (memh != nullptr) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    param.memh = memh;
  }
  return param;
}

}  // namespace

void Comm::advance_staged() {
  // advance() never creates or destroys transfers, so the list is stable while walked.
  for (StagedTransfer* t : staged_) t->advance();
}

void Comm::remove_staged(StagedTransfer* t) noexcept { std::erase(staged_, t); }

void Comm::set_staging(StagingConfig config) {
  transport::Comm::set_staging(std::move(config));
  bounce_pool_ = staging_.engine ? std::make_unique<BouncePool>(*staging_.engine) : nullptr;
}

std::size_t Comm::bounce_bytes() const noexcept {
  return bounce_pool_ ? bounce_pool_->allocated_bytes() : 0;
}

Request Comm::isend(int peer, transport::Tag tag, const void* buffer, std::size_t bytes,
                    ucp_mem* memh) {
  if (!stages(bytes)) return post_send(peer, tag, buffer, bytes, memh);
  if (peer == rank()) throw Error(ErrorKind::kSystem, fmt::format("isend to self (rank {})", peer));
  connect(std::span(&peer, 1));
  // A send only reads the buffer; StagedTransfer takes one pointer type for both directions.
  return staged(true, peer, tag, const_cast<std::byte*>(static_cast<const std::byte*>(buffer)),
                bytes);
}

Request Comm::irecv(int peer, transport::Tag tag, void* buffer, std::size_t bytes, ucp_mem* memh) {
  if (!stages(bytes)) return post_recv(peer, tag, buffer, bytes, memh);
  return staged(false, peer, tag, static_cast<std::byte*>(buffer), bytes);
}

bool Comm::stages(std::size_t bytes) const noexcept {
  return staging_.engine || (staging_.fragment_bytes > 0 && bytes > staging_.fragment_bytes);
}

Request Comm::staged(bool is_send, int peer, transport::Tag tag, std::byte* user,
                     std::size_t bytes) {
  const StagedTransfer::Setup setup{this, staging_.engine.get(), bounce_pool_.get(),
                                    staging_.fragment_bytes, staging_.window};
  return Request(this, new StagedTransfer(setup, is_send, peer, tag, user, bytes), peer, is_send,
                 kStaged);
}

Request Comm::post_send(int peer, transport::Tag tag, const void* buffer, std::size_t bytes,
                        ucp_mem* memh) {
  if (peer == rank()) throw Error(ErrorKind::kSystem, fmt::format("isend to self (rank {})", peer));
  const auto& ep = endpoints_.at(static_cast<std::size_t>(peer));
  if (!ep) connect(std::span(&peer, 1));
  check_peer(peer, "send");
  ucp_request_param_t param = make_param(memh);
  void* req = ucp_tag_send_nbx(ep->get(), buffer, bytes, tag, &param);
  if (UCS_PTR_IS_ERR(req)) throw_peer_error(peer, UCS_PTR_STATUS(req), "send");
  return Request(this, req, peer, true, kUcpRequest);
}

Request Comm::post_recv(int peer, transport::Tag tag, void* buffer, std::size_t bytes,
                        ucp_mem* memh) {
  // Tag receives need no endpoint, but connecting the sender too lets its failure be seen here
  // (peer error handling) and names its host in a timeout.
  if (peer != rank() && !endpoints_.at(static_cast<std::size_t>(peer)))
    connect(std::span(&peer, 1));
  ucp_request_param_t param = make_param(memh);
  void* req = ucp_tag_recv_nbx(worker_->get(), buffer, bytes, tag, ~std::uint64_t{0}, &param);
  if (UCS_PTR_IS_ERR(req)) throw_peer_error(peer, UCS_PTR_STATUS(req), "receive");
  return Request(this, req, peer, false, kUcpRequest);
}

void Comm::check_peer(int peer, std::string_view what) const {
  const auto& ep = endpoints_[static_cast<std::size_t>(peer)];
  if (ep && ep->error_status() != UCS_OK) throw_peer_error(peer, ep->error_status(), what);
}

void Comm::throw_peer_error(int peer, int status, std::string_view what) const {
  // A UCX endpoint error often names the wrong rank: a survivor that exits closes its endpoints,
  // and its neighbours then see *it* fail (netns test: rank 0 blamed rank 1 0.08 s after rank 2
  // was killed). The bootstrap's verdict (the store names the rank whose connection closed)
  // comes within a moment: wait up to 0.5 s for it; check_health() throws it.
  const auto grace_end = Clock::now() + std::chrono::milliseconds(500);
  while (Clock::now() < grace_end) {
    bootstrap().check_health();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw RemoteError(
      fmt::format("UCX {} between {} and {} failed: {} (peer died, or the link "
                  "between them went down)",
                  what, bootstrap().describe(rank()), bootstrap().describe(peer),
                  ucs_status_string(static_cast<ucs_status_t>(status))));
}

namespace {

// The health check (deadline, the job's abort notices, the awaited peer's endpoint) used to run
// every 1024 polls; with IBSCOPE_YIELD_WHEN_IDLE and several ranks per core a poll can cost a
// scheduler slice, so 1024 polls took up to ~8 s (netns test: a rank ended 16 s after a link
// cut with --timeout 8, and missed the abort another rank had sent at 8.6 s). Now it runs
// whenever 10 ms have passed, the clock being read every 16 polls. One Comm per thread.
thread_local Clock::time_point next_health_check{};

}  // namespace

void Comm::poll_health(std::string_view what, const Deadline& deadline, int waiting_for) {
  if ((next_health_poll() & 0xf) != 0) return;
  throw_if_interrupted();
  const auto now = Clock::now();
  if (now < next_health_check) return;
  next_health_check = now + std::chrono::milliseconds(10);
  if (deadline.expired()) {
    throw TimeoutError(fmt::format("{}: {} waited {:.0f} s for {} (stalled or unreachable)", what,
                                   bootstrap().describe(rank()), deadline.budget_s(),
                                   bootstrap().describe(waiting_for)));
  }
  bootstrap().check_health();
  if (waiting_for >= 0 && waiting_for != rank()) check_peer(waiting_for, what);
}

std::string Comm::transports(int peer) const {
  const auto& ep = endpoints_.at(static_cast<std::size_t>(peer));
  return ep ? ep->transports() : std::string();
}

std::vector<std::string> Comm::devices_to(int peer) const { return lane_devices(transports(peer)); }

bool Comm::registers_memory_for(int peer) const {
  return peer != rank() && uses_nic_registration(transports(peer));
}

bool Comm::reads_device_memory() const noexcept { return context_->supports_cuda_memory(); }

}  // namespace ibscope::ucx
