#include "ibscope/bootstrap/tcp_store_server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "ibscope/bootstrap/refusal_log.hpp"
#include "ibscope/bootstrap/wire.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"

namespace ibscope::bootstrap {
namespace {

// Connections accepted per pass of the loop: between batches the loop reads the connections it
// has, so a rank's hello that arrived is read before a flood can push it out.
constexpr int kAcceptBatch = 64;

struct Connection {
  net::Fd fd;
  std::string peer;
  Clock::time_point accepted_at;
  Bytes inbuf;
  int rank = -1;  // set once authenticated
  bool bye = false;
};

struct Round {
  std::string what;
  std::vector<std::optional<Bytes>> parts;
  int have = 0;
  Clock::time_point first_arrival;
};

}  // namespace

class TcpStoreServer::Impl {
 public:
  Impl(net::Fd listener, int size, std::string token, double timeout_s, TcpStoreLimits limits,
       std::atomic<int>& refused)
      : listener_(std::move(listener)),
        size_(size),
        token_(std::move(token)),
        timeout_s_(timeout_s),
        limits_(limits),
        refused_(refused),
        refusals_(limits.log_first_per_kind, limits.log_summary_every_s,
                  [](const std::string& line) { log::warn("{}", line); }),
        host_of_(static_cast<std::size_t>(size)),
        said_bye_(static_cast<std::size_t>(size), false),
        connected_(static_cast<std::size_t>(size), false) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw SystemError("pipe", errno);
    wake_read_ = net::Fd(fds[0]);
    wake_write_ = net::Fd(fds[1]);
    ::fcntl(listener_.get(), F_SETFL, ::fcntl(listener_.get(), F_GETFL) | O_NONBLOCK);
  }

  void run() noexcept {
    try {
      loop();
    } catch (const std::exception& e) {
      log::error("bootstrap server stopped: {}", e.what());
    }
    refusals_.flush(Clock::now(), true);
    std::lock_guard lock(mutex_);
    finished_ = true;
    done_cv_.notify_all();
  }

  void stop() noexcept {
    stop_.store(true);
    const char c = 1;
    [[maybe_unused]] auto n = ::write(wake_write_.get(), &c, 1);
  }

  void wait_until_done(const Deadline& deadline) noexcept {
    std::unique_lock lock(mutex_);
    done_cv_.wait_until(lock, deadline.at(), [&] { return finished_ || all_gone_; });
  }

 private:
  void loop() {
    while (!stop_.load()) {
      std::vector<pollfd> pfds;
      pfds.push_back({listener_.get(), POLLIN, 0});
      pfds.push_back({wake_read_.get(), POLLIN, 0});
      for (const auto& c : conns_) pfds.push_back({c->fd.get(), POLLIN, 0});
      const int pr = ::poll(pfds.data(), pfds.size(), 200);
      if (pr < 0 && errno != EINTR) throw SystemError("bootstrap server poll", errno);
      if (pr > 0) {
        if (pfds[0].revents & POLLIN) accept_new();
        // Connections are read in order; closed ones are erased after the pass.
        for (std::size_t i = 2; i < pfds.size(); ++i) {
          if (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_from(*conns_[i - 2]);
        }
      }
      expire();
      std::erase_if(conns_, [](const auto& c) { return !c->fd.valid(); });
      update_all_gone();
    }
  }

  void update_all_gone() {
    bool gone = true;
    for (int r = 0; r < size_; ++r) {
      if (!said_bye_[static_cast<std::size_t>(r)] &&
          !(aborted_ && !connected_[static_cast<std::size_t>(r)]))
        gone = false;
    }
    if (gone) {
      std::lock_guard lock(mutex_);
      all_gone_ = true;
      done_cv_.notify_all();
    }
  }

  std::size_t pending_count() const {
    std::size_t pending = 0;
    for (const auto& c : conns_) pending += c->rank < 0 && c->fd.valid() ? 1 : 0;
    return pending;
  }

  // Makes room for one more unauthenticated connection. First every waiting one is read (a
  // rank's hello may be there: it is then authenticated, garbage is refused); if that frees no
  // slot, the oldest is dropped. Dropping the newest instead would let a stranger who keeps
  // max_pending connections open lock every rank out; dropping the oldest bounds how long any
  // stranger holds a slot, and a dropped rank connects again (kBusyRefusalPrefix).
  void make_room(bool& swept) {
    if (pending_count() < limits_.max_pending) return;
    if (!swept) {
      swept = true;
      for (std::size_t i = 0; i < conns_.size(); ++i) {
        if (conns_[i]->rank < 0) read_from(*conns_[i]);
      }
    }
    if (pending_count() < limits_.max_pending) return;
    Connection* oldest = nullptr;
    for (auto& c : conns_) {
      if (c->rank >= 0 || !c->fd.valid()) continue;
      if (oldest == nullptr || c->accepted_at < oldest->accepted_at) oldest = c.get();
    }
    if (oldest != nullptr) {
      refuse(*oldest, RefusalKind::kFlood,
             fmt::format("{}: {} unauthenticated connections waiting, dropped the oldest",
                         wire::kBusyRefusalPrefix, limits_.max_pending));
    }
  }

  void accept_new() {
    bool swept = false;
    for (int accepted = 0; accepted < kAcceptBatch; ++accepted) {
      // Blocking socket: reads use MSG_DONTWAIT, and writes must block (bounded by SO_SNDTIMEO
      // below) rather than fail with EAGAIN when a result exceeds the free send buffer.
      net::Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!fd.valid()) return;  // EAGAIN: drained
      make_room(swept);
      const std::string peer = net::peer_name(fd.get());
      // Writes block up to the job timeout: a rank that stops reading is then treated as lost.
      const auto whole_s = static_cast<time_t>(timeout_s_);
      timeval tv{whole_s,
                 static_cast<suseconds_t>((timeout_s_ - static_cast<double>(whole_s)) * 1e6)};
      ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
      auto c = std::make_unique<Connection>();
      c->fd = std::move(fd);
      c->peer = peer;
      c->accepted_at = Clock::now();
      conns_.push_back(std::move(c));
    }
  }

  // The reason goes to the stranger too: it names nothing secret (never the token).
  void refuse(Connection& c, RefusalKind kind, const std::string& why) {
    ++refused_;
    refusals_.refused(kind, c.peer, why, Clock::now());
    send_to(c, wire::encode_refused(why));
    c.fd.reset();
  }

  void read_from(Connection& c) {
    char buf[65536];
    while (c.fd.valid()) {
      const ssize_t n = ::recv(c.fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        c.inbuf.insert(c.inbuf.end(), reinterpret_cast<std::byte*>(buf),
                       reinterpret_cast<std::byte*>(buf) + n);
        try {
          parse_frames(c);
        } catch (const wire::ProtocolError& e) {
          if (c.rank < 0) {
            refuse(c, RefusalKind::kMalformed, e.what());
          } else {
            abort_all(
                wire::AbortKind::kRemote,
                fmt::format("{} sent a malformed bootstrap message: {}", name(c.rank), e.what()));
            c.fd.reset();
          }
        }
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      closed(c);
      return;
    }
  }

  void closed(Connection& c) {
    c.fd.reset();
    if (c.rank < 0) return;
    connected_[static_cast<std::size_t>(c.rank)] = false;
    if (!c.bye) {
      abort_all(wire::AbortKind::kRemote,
                fmt::format("{} exited or crashed: its bootstrap connection closed", name(c.rank)));
    }
  }

  void parse_frames(Connection& c) {
    std::size_t pos = 0;
    while (c.fd.valid() && c.inbuf.size() - pos >= wire::kHeaderBytes) {
      const auto header = wire::decode_header(
          std::span<const std::byte, wire::kHeaderBytes>(c.inbuf.data() + pos, wire::kHeaderBytes),
          c.rank < 0 ? wire::kMaxPreAuthFrameBytes : wire::kMaxFrameBytes);
      if (c.inbuf.size() - pos - wire::kHeaderBytes < header.payload_bytes) break;
      const std::span<const std::byte> payload(c.inbuf.data() + pos + wire::kHeaderBytes,
                                               header.payload_bytes);
      pos += wire::kHeaderBytes + header.payload_bytes;
      handle(c, header.type, payload);
    }
    c.inbuf.erase(c.inbuf.begin(), c.inbuf.begin() + static_cast<std::ptrdiff_t>(pos));
  }

  void handle(Connection& c, wire::MsgType type, std::span<const std::byte> payload) {
    if (c.rank < 0) {
      if (type != wire::MsgType::kHello) {
        refuse(c, RefusalKind::kMalformed, "first message was not a hello");
        return;
      }
      hello(c, wire::decode_hello(payload));
      return;
    }
    switch (type) {
      case wire::MsgType::kContrib:
        contribute(c.rank, wire::decode_contrib(payload));
        break;
      case wire::MsgType::kAbort: {
        const auto m = wire::decode_abort(payload);
        abort_all(m.kind, fmt::format("{} aborted: {}", name(c.rank), m.reason), c.rank);
        break;
      }
      case wire::MsgType::kBye:
        c.bye = true;
        said_bye_[static_cast<std::size_t>(c.rank)] = true;
        break;
      default:
        throw wire::ProtocolError(
            fmt::format("unexpected message type {}", static_cast<int>(type)));
    }
  }

  void hello(Connection& c, const wire::Hello& h) {
    // Compare the whole token regardless of where it differs.
    unsigned diff = h.token.size() != token_.size() ? 1u : 0u;
    for (std::size_t i = 0; i < std::min(h.token.size(), token_.size()); ++i)
      diff |= static_cast<unsigned>(h.token[i] ^ token_[i]);
    if (diff != 0 && h.token.empty()) {
      return refuse(c, RefusalKind::kNoToken, "no job token (IBSCOPE_TOKEN unset on the peer?)");
    }
    if (diff != 0) return refuse(c, RefusalKind::kWrongToken, "wrong job token");
    if (h.size != static_cast<std::uint32_t>(size_)) {
      return refuse(c, RefusalKind::kWrongJob,
                    fmt::format("job size {} does not match this job's {}", h.size, size_));
    }
    if (h.rank >= h.size) {
      return refuse(c, RefusalKind::kWrongJob, fmt::format("rank {} out of range", h.rank));
    }
    const auto r = static_cast<std::size_t>(h.rank);
    if (connected_[r] || said_bye_[r]) {
      return refuse(c, RefusalKind::kWrongJob, fmt::format("rank {} is already connected", h.rank));
    }
    c.rank = static_cast<int>(h.rank);
    connected_[r] = true;
    host_of_[r] = h.host;
    send_to(c, wire::encode_empty(wire::MsgType::kWelcome));
    if (aborted_) send_to(c, wire::encode(wire::Abort{abort_kind_, abort_reason_}));
  }

  void contribute(int rank, wire::Contrib m) {
    auto [it, inserted] = rounds_.try_emplace(m.seq);
    Round& round = it->second;
    if (inserted) {
      round.what = m.what;
      round.parts.resize(static_cast<std::size_t>(size_));
      round.first_arrival = Clock::now();
    } else if (round.what != m.what) {
      abort_all(wire::AbortKind::kRemote,
                fmt::format("ranks disagree about the bootstrap phase (round {}): {} is in '{}', "
                            "others in '{}'",
                            m.seq, name(rank), m.what, round.what));
      return;
    }
    auto& slot = round.parts[static_cast<std::size_t>(rank)];
    if (slot) throw wire::ProtocolError(fmt::format("duplicate contribution to round {}", m.seq));
    slot = std::move(m.data);
    if (++round.have < size_) return;
    wire::Result result{it->first, {}};
    result.blobs.reserve(round.parts.size());
    for (auto& p : round.parts) result.blobs.push_back(std::move(*p));
    rounds_.erase(it);
    const Bytes frame = wire::encode(result);
    for (auto& c : conns_) {
      if (c->rank >= 0 && c->fd.valid()) send_to(*c, frame);
    }
  }

  void expire() {
    const auto now = Clock::now();
    for (auto& c : conns_) {
      if (c->rank < 0 && c->fd.valid() &&
          seconds_between(c->accepted_at, now) > limits_.hello_deadline_s) {
        refuse(*c, RefusalKind::kStalled,
               fmt::format("no complete hello within {:g} s ({} bytes received)",
                           limits_.hello_deadline_s, c->inbuf.size()));
      }
    }
    refusals_.flush(now);
    if (aborted_) return;
    for (const auto& [seq, round] : rounds_) {
      if (seconds_between(round.first_arrival, now) <= timeout_s_) continue;
      std::string missing;
      for (int r = 0; r < size_; ++r) {
        if (round.parts[static_cast<std::size_t>(r)]) continue;
        if (!missing.empty()) missing += ", ";
        missing += host_of_[static_cast<std::size_t>(r)].empty()
                       ? fmt::format("rank {} (never connected)", r)
                       : name(r);
      }
      abort_all(wire::AbortKind::kTimeout,
                fmt::format("bootstrap '{}' timed out after {:.0f} s: {} never arrived", round.what,
                            timeout_s_, missing));
      return;
    }
  }

  void abort_all(wire::AbortKind kind, const std::string& reason, int except_rank = -1) {
    if (aborted_) return;
    aborted_ = true;
    abort_kind_ = kind;
    abort_reason_ = reason;
    const Bytes frame = wire::encode(wire::Abort{kind, reason});
    for (auto& c : conns_) {
      if (c->rank >= 0 && c->rank != except_rank && c->fd.valid()) send_to(*c, frame);
    }
  }

  void send_to(Connection& c, const Bytes& frame) {
    try {
      net::write_all(c.fd.get(), frame.data(), frame.size());
    } catch (const std::exception&) {
      // The peer stopped reading or vanished; its closed socket will be noticed by poll.
      if (c.rank >= 0) connected_[static_cast<std::size_t>(c.rank)] = false;
      c.fd.reset();
    }
  }

  std::string name(int rank) const {
    const std::string& h = host_of_[static_cast<std::size_t>(rank)];
    return h.empty() ? fmt::format("rank {}", rank) : fmt::format("rank {} ({})", rank, h);
  }

  net::Fd listener_;
  net::Fd wake_read_, wake_write_;
  int size_;
  std::string token_;
  double timeout_s_;
  TcpStoreLimits limits_;
  std::atomic<int>& refused_;
  RefusalLog refusals_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::map<std::uint64_t, Round> rounds_;
  std::vector<std::string> host_of_;
  std::vector<bool> said_bye_;
  std::vector<bool> connected_;
  bool aborted_ = false;
  wire::AbortKind abort_kind_ = wire::AbortKind::kRemote;
  std::string abort_reason_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool finished_ = false;
  bool all_gone_ = false;
};

TcpStoreServer::TcpStoreServer(net::Fd listener, int size, std::string token, double timeout_s,
                               TcpStoreLimits limits)
    : port_(net::bound_port(listener.get())) {
  impl_ = std::make_unique<Impl>(std::move(listener), size, std::move(token), timeout_s, limits,
                                 refused_);
  thread_ = std::thread([this] { impl_->run(); });
}

TcpStoreServer::~TcpStoreServer() {
  impl_->stop();
  if (thread_.joinable()) thread_.join();
}

void TcpStoreServer::wait_until_done(const Deadline& deadline) noexcept {
  impl_->wait_until_done(deadline);
}

}  // namespace ibscope::bootstrap
