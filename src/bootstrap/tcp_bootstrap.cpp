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
      throw_if_interrupted();
      std::this_thread::sleep_for(std::chrono::milliseconds(kRejoinPauseMs));
    }
    reader_ = std::thread([this] { read_loop(); });
    try {
      learn_layout();
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
    const std::uint64_t seq = contribute(wire::RoundMode::kAllgather, mine, what);
    auto blobs = await(results_, seq, what);
    return one_per_rank(std::move(blobs), what);
  }

  std::vector<Bytes> gather(std::span<const std::byte> mine, std::string_view what) override {
    const std::uint64_t seq = contribute(wire::RoundMode::kGather, mine, what);
    if (rank() != 0) return {};  // only the root is answered; the others go on
    auto blobs = await(results_, seq, what);
    return one_per_rank(std::move(blobs), what);
  }

  Bytes broadcast(std::span<const std::byte> mine, std::string_view what) override {
    const std::uint64_t seq = contribute(wire::RoundMode::kBroadcast,
                                         rank() == 0 ? mine : std::span<const std::byte>(), what);
    auto blobs = await(results_, seq, what);
    if (blobs.size() != 1) {
      throw wire::ProtocolError(
          fmt::format("bootstrap '{}': {} blobs in a broadcast", what, blobs.size()));
    }
    return std::move(blobs[0]);
  }

  void barrier(std::string_view what) override {
    const std::uint64_t seq = contribute(wire::RoundMode::kFence, {}, what);
    (void)await(results_, seq, what);
  }

  void publish(std::string_view key, std::span<const std::byte> value) override {
    check_health();
    send(wire::encode(wire::Put{std::string(key), Bytes(value.begin(), value.end())}));
  }

  std::vector<Bytes> lookup(std::string_view key, std::span<const int> ranks,
                            std::string_view what) override {
    check_health();
    wire::Get get{next_get_seq_++, std::string(key), {}};
    get.ranks.reserve(ranks.size());
    for (const int r : ranks) {
      if (r < 0 || r >= size()) throw UsageError(fmt::format("{}: no rank {}", what, r));
      get.ranks.push_back(static_cast<std::uint32_t>(r));
    }
    send(wire::encode(get));
    wire::Values answer = await(values_, get.seq, what);
    if (!answer.error.empty()) {
      throw RemoteError(fmt::format("bootstrap '{}': {}", what, answer.error));
    }
    if (answer.values.size() != ranks.size()) {
      throw wire::ProtocolError(fmt::format("bootstrap '{}': {} values for {} ranks", what,
                                            answer.values.size(), ranks.size()));
    }
    return std::move(answer.values);
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

  // The host layout round: local rank and size, the host count, and every rank's host on rank 0
  // only (O(1) bytes per rank; the others learn their peers' hosts as they connect to them).
  void learn_layout() {
    const std::string me = local_hostname();
    const std::uint64_t seq = contribute(wire::RoundMode::kHosts, {}, "hostname exchange");
    const wire::Layout l = await(layouts_, seq, "hostname exchange");
    std::vector<std::string> hosts = l.hosts;
    if (rank() == 0 && hosts.size() != static_cast<std::size_t>(size())) {
      throw wire::ProtocolError(
          fmt::format("bootstrap 'host layout': {} hosts for {} ranks", hosts.size(), size()));
    }
    if (rank() != 0) {
      hosts.assign(static_cast<std::size_t>(size()), std::string());
      hosts[0] = l.root_host;
      hosts[static_cast<std::size_t>(rank())] = me;
    }
    set_layout(static_cast<int>(l.local_rank), static_cast<int>(l.local_size),
               static_cast<int>(l.host_count), std::move(hosts));
  }

  std::vector<Bytes> one_per_rank(std::vector<Bytes> blobs, std::string_view what) const {
    if (blobs.size() != static_cast<std::size_t>(size())) {
      throw wire::ProtocolError(
          fmt::format("bootstrap '{}': {} contributions for {} ranks", what, blobs.size(), size()));
    }
    return blobs;
  }

  std::uint64_t contribute(wire::RoundMode mode, std::span<const std::byte> mine,
                           std::string_view what) {
    check_health();
    const std::uint64_t seq = next_seq_++;
    send(
        wire::encode(wire::Contrib{seq, mode, std::string(what), Bytes(mine.begin(), mine.end())}));
    return seq;
  }

  // Waits for the answer `seq` to arrive in `answers` (filled by the reader thread), within the
  // job timeout, in slices of 200 ms so that a signal stops the wait (core/interrupt.hpp) as it
  // does in UCX's.
  template <typename T>
  T await(std::map<std::uint64_t, T>& answers, std::uint64_t seq, std::string_view what) {
    std::unique_lock lock(mutex_);
    const Deadline deadline(timeout_s() + kClientGraceS);
    while (true) {
      throw_if_aborted_locked();
      if (auto it = answers.find(seq); it != answers.end()) {
        T out = std::move(it->second);
        answers.erase(it);
        return out;
      }
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
        } else if (type == wire::MsgType::kLayout) {
          auto l = wire::decode_layout(payload);
          layouts_[l.seq] = std::move(l);
        } else if (type == wire::MsgType::kValues) {
          auto v = wire::decode_values(payload);
          values_[v.seq] = std::move(v);
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
  std::map<std::uint64_t, std::vector<Bytes>> results_;  // by round (guarded by mutex_)
  std::map<std::uint64_t, wire::Layout> layouts_;        // by round (guarded by mutex_)
  std::map<std::uint64_t, wire::Values> values_;         // by get (guarded by mutex_)
  std::optional<wire::Abort> abort_;
  bool root_lost_ = false;   // abort_ says rank 0 is gone (guarded by mutex_)
  bool sent_abort_ = false;  // this rank told the job to stop (guarded by mutex_)
  std::uint64_t next_seq_ = 0;
  std::uint64_t next_get_seq_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_tcp_bootstrap(const TcpBootstrapOptions& options) {
  if (options.token.empty() && options.rank == 0) {
    log::warn(
        "IBSCOPE_TOKEN is not set: the bootstrap store on {} accepts any client that knows "
        "its address; export a random one for every rank, e.g. "
        "IBSCOPE_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')",
        options.root.str());
  }
  return std::make_unique<TcpBootstrap>(options);
}

}  // namespace ibscope::bootstrap
