#include "ibscope/bootstrap/tcp_bootstrap.hpp"

#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "ibscope/bootstrap/tcp_store_server.hpp"
#include "ibscope/bootstrap/wire.hpp"
#include "ibscope/core/interrupt.hpp"
#include "ibscope/core/log.hpp"

namespace ibscope::bootstrap {
namespace {

// Clients wait a little longer than the server's round deadline so that the server's message,
// which names the missing ranks, arrives first.
constexpr double kClientGraceS = 5.0;
// How long rank 0 keeps serving after an abort, for ranks still reading the notice.
constexpr double kAbortGraceS = 2.0;
// Pause before connecting again after the root dropped us to make room in a flood.
constexpr int kRejoinPauseMs = 50;

// The root closed the connection at a frame boundary.
class RootClosed : public RemoteError {
 public:
  using RemoteError::RemoteError;
};

class TcpBootstrap final : public Bootstrap {
 public:
  explicit TcpBootstrap(const TcpBootstrapOptions& o)
      : Bootstrap(o.rank, o.size, o.timeout_s), root_(o.root) {
    if (o.rank == 0) {
      net::Fd listener =
          o.inherited_listen_fd >= 0 ? net::Fd(o.inherited_listen_fd) : net::listen_tcp(o.root);
      server_ = std::make_unique<TcpStoreServer>(std::move(listener), o.size, o.token, o.timeout_s,
                                                 o.store_limits);
    }
    const Deadline deadline(o.timeout_s);
    while (!join(o, deadline)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kRejoinPauseMs));
    }
    reader_ = std::thread([this] { read_loop(); });
    try {
      discover_hosts();
    } catch (...) {
      stop_reader();
      throw;
    }
  }

  ~TcpBootstrap() override {
    try {
      send(wire::encode_empty(wire::MsgType::kBye));
    } catch (...) {
      // The root is gone already; nothing to tell it.
    }
    // Rank 0 serves until every other rank has said goodbye (or the job timeout passes). After
    // an abort the server has already sent the notice to every connected rank, and a rank behind
    // a cut link never says goodbye: waiting the whole timeout there kept rank 0 alive for
    // --timeout more seconds (netns test: 16 s after the cut with --timeout 8), so a short grace.
    if (server_) {
      bool aborted = false;
      {
        std::lock_guard lock(mutex_);
        aborted = abort_.has_value() || sent_abort_;
      }
      server_->wait_until_done(
          Deadline(aborted ? std::min(timeout_s(), kAbortGraceS) : timeout_s()));
    }
    stop_reader();
    server_.reset();
  }

  std::vector<Bytes> allgather(std::span<const std::byte> mine, std::string_view what) override {
    check_health();
    const std::uint64_t seq = next_seq_++;
    send(wire::encode(wire::Contrib{seq, std::string(what), Bytes(mine.begin(), mine.end())}));
    std::unique_lock lock(mutex_);
    const Deadline deadline(timeout_s() + kClientGraceS);
    while (true) {
      throw_if_aborted_locked();
      if (auto it = results_.find(seq); it != results_.end()) {
        auto blobs = std::move(it->second);
        results_.erase(it);
        if (blobs.size() != static_cast<std::size_t>(size())) {
          throw wire::ProtocolError(fmt::format("bootstrap '{}': {} contributions for {} ranks",
                                                what, blobs.size(), size()));
        }
        return blobs;
      }
      // In slices of 200 ms: a signal stops the wait (core/interrupt.hpp) as it does in UCX's.
      throw_if_interrupted();
      const auto slice = std::min(
          deadline.at(), std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
      if (cv_.wait_until(lock, slice) == std::cv_status::timeout && deadline.expired()) {
        throw TimeoutError(
            fmt::format("bootstrap '{}': no answer from the root (rank 0 at {}) within {:.0f} s",
                        what, root_.str(), deadline.budget_s()));
      }
    }
  }

  void check_health() override {
    std::lock_guard lock(mutex_);
    throw_if_aborted_locked();
  }

  void abort_job(std::string_view reason) noexcept override {
    {
      std::lock_guard lock(mutex_);
      sent_abort_ = true;
    }
    try {
      send(wire::encode(wire::Abort{wire::AbortKind::kRemote, std::string(reason)}));
    } catch (...) {
      // Best effort: the others will also see our connection close.
    }
  }

  std::string_view kind() const noexcept override { return "tcp"; }

 private:
  // Connects and says hello. True once welcomed; false if the root dropped the connection
  // before answering or said it is busy (a flood of strangers: it drops the oldest waiting
  // connection, which may be ours), and the deadline leaves time to try again. Throws on a
  // final refusal or when the deadline has passed.
  bool join(const TcpBootstrapOptions& o, const Deadline& deadline) {
    fd_ = net::connect_tcp(root_, deadline, "the bootstrap root (rank 0)");
    std::optional<std::string> busy;
    try {
      send(wire::encode(wire::Hello{o.token, static_cast<std::uint32_t>(o.rank),
                                    static_cast<std::uint32_t>(o.size), local_hostname()}));
      const auto [type, payload] = read_frame(deadline);
      if (type == wire::MsgType::kWelcome) return true;
      if (type != wire::MsgType::kRefused) {
        throw wire::ProtocolError(
            fmt::format("bootstrap root at {} answered the hello with type {}", root_.str(),
                        static_cast<int>(type)));
      }
      std::string reason = wire::decode_refused(payload);
      if (!reason.starts_with(wire::kBusyRefusalPrefix)) {
        throw RemoteError(
            fmt::format("bootstrap root at {} refused rank {}: {}", root_.str(), o.rank, reason));
      }
      busy = std::move(reason);
    } catch (const SystemError& e) {
      busy = e.what();  // reset or closed under us: the root dropped the connection
    } catch (const RootClosed& e) {
      busy = e.what();
    }
    if (deadline.expired()) {
      throw TimeoutError(
          fmt::format("bootstrap root at {} did not admit rank {} within {:.0f} s: "
                      "{}",
                      root_.str(), o.rank, deadline.budget_s(), *busy));
    }
    log::debug("bootstrap: rank {} connects again: {}", o.rank, *busy);
    fd_.reset();
    return false;
  }

  void stop_reader() noexcept {
    closing_.store(true);
    ::shutdown(fd_.get(), SHUT_RDWR);
    if (reader_.joinable()) reader_.join();
  }

  void throw_if_aborted_locked() {
    if (!abort_) return;
    if (abort_->kind == wire::AbortKind::kTimeout) throw TimeoutError(abort_->reason);
    if (root_lost_) throw RootLostError(abort_->reason);
    throw RemoteError(abort_->reason);
  }

  void send(const Bytes& frame) {
    std::lock_guard lock(send_mutex_);
    net::write_all(fd_.get(), frame.data(), frame.size());
  }

  std::pair<wire::MsgType, Bytes> read_frame(const Deadline& deadline) {
    std::array<std::byte, wire::kHeaderBytes> header{};
    if (!net::read_exact(fd_.get(), header.data(), header.size(), deadline)) {
      throw RootClosed(fmt::format("bootstrap root at {} closed the connection", root_.str()));
    }
    const auto h = wire::decode_header(header, wire::kMaxFrameBytes);
    Bytes payload(h.payload_bytes);
    if (h.payload_bytes > 0) net::read_exact(fd_.get(), payload.data(), payload.size(), deadline);
    return {h.type, std::move(payload)};
  }

  void read_loop() noexcept {
    std::string lost;
    try {
      while (true) {
        auto [type, payload] = read_frame(Deadline());
        std::lock_guard lock(mutex_);
        if (type == wire::MsgType::kResult) {
          auto r = wire::decode_result(payload);
          results_[r.seq] = std::move(r.blobs);
        } else if (type == wire::MsgType::kAbort) {
          if (!abort_) abort_ = wire::decode_abort(payload);
        }
        cv_.notify_all();
      }
    } catch (const std::exception& e) {
      lost = e.what();
    }
    if (closing_.load()) return;
    std::lock_guard lock(mutex_);
    if (!abort_) {
      abort_ = wire::Abort{wire::AbortKind::kRemote,
                           fmt::format("lost the bootstrap connection to rank 0 at {} (rank 0 "
                                       "exited or crashed): {}",
                                       root_.str(), lost)};
      root_lost_ = true;
    }
    cv_.notify_all();
  }

  net::HostPort root_;
  std::unique_ptr<TcpStoreServer> server_;
  net::Fd fd_;
  std::thread reader_;
  std::atomic<bool> closing_{false};
  std::mutex send_mutex_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::uint64_t, std::vector<Bytes>> results_;
  std::optional<wire::Abort> abort_;
  bool root_lost_ = false;   // abort_ says rank 0 is gone (guarded by mutex_)
  bool sent_abort_ = false;  // this rank told the job to stop (guarded by mutex_)
  std::uint64_t next_seq_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_tcp_bootstrap(const TcpBootstrapOptions& options) {
  if (options.token.empty() && options.rank == 0) {
    log::warn(
        "IBSCOPE_TOKEN is not set: the bootstrap store on {} accepts any client that knows "
        "its address; export IBSCOPE_TOKEN=<secret> on every rank",
        options.root.str());
  }
  return std::make_unique<TcpBootstrap>(options);
}

}  // namespace ibscope::bootstrap
