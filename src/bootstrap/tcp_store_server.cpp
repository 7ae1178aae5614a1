#include "ibscope/bootstrap/tcp_store_server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ibscope/bootstrap/guess_limiter.hpp"
#include "ibscope/bootstrap/refusal_log.hpp"
#include "ibscope/bootstrap/wire.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/fd_limit.hpp"
#include "ibscope/core/log.hpp"

namespace ibscope::bootstrap {
// Named, not anonymous: Impl (a member of an exported class) holds these types.
namespace tcp_store_detail {

// Connections accepted per pass of the loop: between batches the loop reads the connections it
// has, so a rank's hello that arrived is read before a flood can push it out.
constexpr int kAcceptBatch = 64;
// Events taken from epoll per pass.
constexpr int kEventBatch = 256;
// The periodic checks (hello deadlines, round deadlines, stalled writers) run this often.
constexpr double kHousekeepingPeriodS = 0.1;
// Out of descriptors with no stranger's connection to close, the store stops watching the
// listener for this long: epoll reports it readable for as long as connections wait, and
// accept4 fails with EMFILE each time, which spun a core before issue 35.
constexpr double kAcceptBackoffS = 0.1;
// At most one warning about running out of descriptors this often.
constexpr double kFdWarningEveryS = 10.0;

using Frame = std::shared_ptr<const Bytes>;

struct Connection {
  net::Fd fd;
  std::string peer;
  std::string source;  // peer's address as the wrong-token budget counts it (guess_limiter.hpp)
  Clock::time_point accepted_at;
  Bytes inbuf;  // at most one frame: decode_header bounds it
  std::deque<Frame> out;
  std::size_t out_offset = 0;  // bytes of out.front() already sent
  Clock::time_point out_blocked_since{};
  bool want_write = false;  // registered for EPOLLOUT
  int rank = -1;            // set once authenticated
  bool bye = false;
};

struct Round {
  std::string what;
  wire::RoundMode mode = wire::RoundMode::kAllgather;
  std::vector<std::optional<Bytes>> parts;
  int have = 0;
  Clock::time_point first_arrival;
};

// Raises the open-file limit before the store accepts anything (the binary did at start; a
// program that only links the library may not have), and warns when even the hard limit is
// below what the job needs: the ranks past it could not connect.
void check_fd_limit(int size) {
  const std::uint64_t needed = store_fds_needed(size);
  FdLimit limit = fd_limit();
  if (limit.soft < needed) limit = raise_fd_limit();
  if (limit.soft >= needed) return;
  log::warn(
      "bootstrap: rank 0's store needs about {} open files for {} ranks (one per rank and {} "
      "for the rest of rank 0), but its open-file limit is {} and the hard limit {}: the ranks "
      "past about {} cannot connect and the job will time out. Raise the hard limit on the "
      "host of rank 0 (ulimit -Hn; /etc/security/limits.conf nofile, LimitNOFILE= of a "
      "systemd unit, or the limit Slurm propagates), or run fewer ranks",
      needed, size, kStoreFdMargin, fd_count_text(limit.soft), fd_count_text(limit.hard),
      limit.soft > kStoreFdMargin ? limit.soft - kStoreFdMargin : 0);
}

}  // namespace tcp_store_detail
using namespace tcp_store_detail;

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
        guesses_({limits.wrong_token_burst, limits.wrong_token_per_s, 4096}),
        host_of_(static_cast<std::size_t>(size)),
        said_bye_(static_cast<std::size_t>(size), false),
        connected_(static_cast<std::size_t>(size), false) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw SystemError("pipe", errno);
    wake_read_ = net::Fd(fds[0]);
    wake_write_ = net::Fd(fds[1]);
    ::fcntl(listener_.get(), F_SETFL, ::fcntl(listener_.get(), F_GETFL) | O_NONBLOCK);
    epoll_ = net::Fd(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_.valid()) throw SystemError("epoll_create1", errno);
    watch(listener_.get(), EPOLLIN, nullptr);
    watch(wake_read_.get(), EPOLLIN, &wake_tag_);
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

  TcpStoreTraffic traffic() const noexcept {
    return {bytes_in_.load(), bytes_out_.load(), frames_in_.load(), frames_out_.load()};
  }

 private:
  void watch(int fd, std::uint32_t events, void* tag) {
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = tag;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      throw SystemError("epoll_ctl(ADD)", errno);
    }
  }

  void set_want_write(Connection& c, bool want) {
    if (c.want_write == want || !c.fd.valid()) return;
    epoll_event ev{};
    ev.events = EPOLLIN | (want ? EPOLLOUT : 0u);
    ev.data.ptr = &c;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev);
    c.want_write = want;
  }

  void loop() {
    std::vector<epoll_event> events(kEventBatch);
    auto next_housekeeping = Clock::now();
    while (!stop_.load()) {
      const int n = ::epoll_wait(epoll_.get(), events.data(), kEventBatch, 100);
      if (n < 0 && errno != EINTR) throw SystemError("bootstrap server epoll_wait", errno);
      for (int i = 0; i < n; ++i) {
        void* tag = events[static_cast<std::size_t>(i)].data.ptr;
        const std::uint32_t ev = events[static_cast<std::size_t>(i)].events;
        if (tag == nullptr) {
          accept_new();
        } else if (tag == &wake_tag_) {
          char drain[64];
          while (::read(wake_read_.get(), drain, sizeof(drain)) > 0) {
          }
        } else {
          auto& c = *static_cast<Connection*>(tag);
          if (c.fd.valid() && (ev & EPOLLOUT)) flush(c);
          if (c.fd.valid() && (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))) read_from(c);
        }
      }
      const auto now = Clock::now();
      if (accept_paused_ && now >= accept_resume_at_) {
        accept_paused_ = false;
        watch_listener(EPOLLIN);
      }
      if (now >= next_housekeeping) {
        next_housekeeping =
            now + std::chrono::milliseconds(static_cast<int>(kHousekeepingPeriodS * 1000));
        expire(now);
      }
      if (dirty_) {
        dirty_ = false;
        // Closed connections go after the pass: this pass's events may still point at them.
        std::erase_if(conns_, [](const auto& c) { return !c->fd.valid(); });
        update_all_gone();
      }
    }
  }

  void update_all_gone() {
    for (int r = 0; r < size_; ++r) {
      if (!said_bye_[static_cast<std::size_t>(r)] &&
          !(aborted_ && !connected_[static_cast<std::size_t>(r)]))
        return;
    }
    std::lock_guard lock(mutex_);
    all_gone_ = true;
    done_cv_.notify_all();
  }

  // Makes room for one more unauthenticated connection. First every waiting one is read (a
  // rank's hello may be there: it is then authenticated, garbage is refused); if that frees no
  // slot, the oldest is dropped. Dropping the newest instead would let a stranger who keeps
  // max_pending connections open lock every rank out; dropping the oldest bounds how long any
  // stranger holds a slot, and a dropped rank connects again (kBusyRefusalPrefix).
  void make_room(bool& swept) {
    if (pending_ < limits_.max_pending) return;
    sweep_pending(swept);
    if (pending_ < limits_.max_pending) return;
    if (Connection* oldest = oldest_pending()) {
      refuse(*oldest, RefusalKind::kFlood,
             fmt::format("{}: {} unauthenticated connections waiting, dropped the oldest",
                         wire::kBusyRefusalPrefix, limits_.max_pending));
    }
  }

  // Reads every unauthenticated connection once per pass (a rank's hello may be waiting).
  void sweep_pending(bool& swept) {
    if (swept) return;
    swept = true;
    for (std::size_t i = 0; i < conns_.size(); ++i) {
      if (conns_[i]->rank < 0 && conns_[i]->fd.valid()) read_from(*conns_[i]);
    }
  }

  Connection* oldest_pending() {
    Connection* oldest = nullptr;
    for (auto& c : conns_) {
      if (c->rank >= 0 || !c->fd.valid()) continue;
      if (oldest == nullptr || c->accepted_at < oldest->accepted_at) oldest = c.get();
    }
    return oldest;
  }

  void watch_listener(std::uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = nullptr;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, listener_.get(), &ev);
  }

  // accept4 failed for want of descriptors (EMFILE: this process's limit; ENFILE: the
  // system's). That is not "no more connections": they wait in the backlog, and one of them
  // may be a rank. So the store makes a descriptor free: first it reads the waiting
  // connections (a hello may authenticate a rank, garbage or a closed peer frees one), then it
  // drops the oldest stranger, as make_room does in a flood. True when it is worth accepting
  // again. With no stranger left, every descriptor holds a rank: the limit is below what the
  // job needs, so the store stops watching the listener for kAcceptBackoffS instead of
  // spinning, and says so.
  bool free_a_descriptor(bool& swept, int err) {
    if (!swept) {
      sweep_pending(swept);
      return true;
    }
    const FdLimit limit = fd_limit();
    if (Connection* oldest = oldest_pending()) {
      refuse(*oldest, RefusalKind::kFlood,
             fmt::format("{}: out of file descriptors (limit {}), dropped the oldest "
                         "unauthenticated connection",
                         wire::kBusyRefusalPrefix, fd_count_text(limit.soft)));
      return true;
    }
    accept_paused_ = true;
    accept_resume_at_ =
        Clock::now() + std::chrono::milliseconds(static_cast<int>(kAcceptBackoffS * 1000));
    watch_listener(0);
    const auto now = Clock::now();
    if (!fd_warned_ || seconds_between(last_fd_warning_, now) >= kFdWarningEveryS) {
      fd_warned_ = true;
      last_fd_warning_ = now;
      const auto ranks = std::count(connected_.begin(), connected_.end(), true);
      log::warn(
          "bootstrap: rank 0's store cannot accept connections: {} (open-file limit {}, hard "
          "limit {}); {} of {} ranks are connected and no stranger's connection is left to "
          "close. The others wait; a job of {} ranks needs an open-file limit of about {} on "
          "rank 0 (ulimit -n)",
          std::strerror(err), fd_count_text(limit.soft), fd_count_text(limit.hard), ranks, size_,
          size_, store_fds_needed(size_));
    }
    return false;
  }

  void accept_new() {
    bool swept = false;
    for (int accepted = 0; accepted < kAcceptBatch; ++accepted) {
      net::Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!fd.valid()) {
        const int err = errno;
        if (err == EAGAIN || err == EWOULDBLOCK) return;  // drained
        if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
          if (free_a_descriptor(swept, err)) continue;
          return;
        }
        continue;  // the connection failed before it was accepted (ECONNABORTED, EPROTO, ...)
      }
      make_room(swept);
      auto c = std::make_unique<Connection>();
      c->peer = net::peer_name(fd.get());
      c->source = guess_source(c->peer);
      c->fd = std::move(fd);
      c->accepted_at = Clock::now();
      watch(c->fd.get(), EPOLLIN, c.get());
      ++pending_;
      conns_.push_back(std::move(c));
      // A rank sends its hello as soon as it is connected: read it now, so that the rank is
      // authenticated before this pass may have to drop the oldest waiting connection.
      read_from(*conns_.back());
    }
  }

  // Closes a connection (epoll forgets it with its last descriptor) and counts it out.
  void drop(Connection& c) {
    if (!c.fd.valid()) return;
    if (c.rank < 0) --pending_;
    c.fd.reset();
    c.out.clear();
    c.inbuf = Bytes();
    dirty_ = true;
  }

  // The reason goes to the stranger too: it names nothing secret (never the token).
  void refuse(Connection& c, RefusalKind kind, const std::string& why) {
    ++refused_;
    refusals_.refused(kind, c.peer, why, Clock::now());
    send_to(c, std::make_shared<const Bytes>(wire::encode_refused(why)));
    drop(c);
  }

  void read_from(Connection& c) {
    char buf[65536];
    while (c.fd.valid()) {
      const ssize_t n = ::recv(c.fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        bytes_in_ += static_cast<std::uint64_t>(n);
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
            drop(c);
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
    lost(c, wire::AbortKind::kRemote, "exited or crashed: its bootstrap connection closed", false);
  }

  // Closes a rank's connection and, unless it had said goodbye (or `even_after_bye`), stops the
  // job naming it: "<rank (host)> <how>". A stranger's connection is only closed.
  void lost(Connection& c, wire::AbortKind kind, std::string_view how, bool even_after_bye) {
    const int rank = c.rank;
    const bool bye = c.bye;
    drop(c);
    if (rank < 0) return;
    connected_[static_cast<std::size_t>(rank)] = false;
    if (!bye || even_after_bye) abort_all(kind, fmt::format("{} {}", name(rank), how));
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
      ++frames_in_;
      handle(c, header.type, payload);
    }
    if (c.fd.valid()) {
      c.inbuf.erase(c.inbuf.begin(), c.inbuf.begin() + static_cast<std::ptrdiff_t>(pos));
    }
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
      case wire::MsgType::kPut:
        put(c.rank, wire::decode_put(payload));
        break;
      case wire::MsgType::kGet:
        get(c, wire::decode_get(payload));
        break;
      case wire::MsgType::kAbort: {
        const auto m = wire::decode_abort(payload);
        abort_all(m.kind, fmt::format("{} aborted: {}", name(c.rank), m.reason), c.rank);
        break;
      }
      case wire::MsgType::kBye:
        c.bye = true;
        said_bye_[static_cast<std::size_t>(c.rank)] = true;
        dirty_ = true;
        break;
      default:
        throw wire::ProtocolError(
            fmt::format("unexpected message type {}", static_cast<int>(type)));
    }
  }

  void hello(Connection& c, const wire::Hello& h) {
    const auto now = Clock::now();
    // A source that has spent its budget of wrong tokens is refused before its token is looked
    // at, right or wrong, so that guessing from many connections at once learns nothing more.
    if (!guesses_.may_try(c.source, now)) {
      return refuse(
          c, RefusalKind::kGuessing,
          fmt::format("{}: too many wrong job tokens from {}; it may try again in "
                      "{:.1f} s",
                      wire::kBusyRefusalPrefix, c.source, guesses_.wait_s(c.source, now)));
    }
    // Compare the whole token regardless of where it differs.
    unsigned diff = h.token.size() != token_.size() ? 1u : 0u;
    for (std::size_t i = 0; i < std::min(h.token.size(), token_.size()); ++i)
      diff |= static_cast<unsigned>(h.token[i] ^ token_[i]);
    if (diff != 0) guesses_.spend(c.source, now);
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
    --pending_;
    connected_[r] = true;
    host_of_[r] = h.host;
    send_to(c, welcome_);
    if (aborted_) send_to(c, std::make_shared<const Bytes>(encode_abort()));
  }

  void contribute(int rank, wire::Contrib m) {
    auto [it, inserted] = rounds_.try_emplace(m.seq);
    Round& round = it->second;
    if (inserted) {
      round.what = m.what;
      round.mode = m.mode;
      round.parts.resize(static_cast<std::size_t>(size_));
      round.first_arrival = Clock::now();
    } else if (round.what != m.what || round.mode != m.mode) {
      abort_all(wire::AbortKind::kRemote,
                fmt::format("ranks disagree about the bootstrap phase (round {}): {} is in '{}', "
                            "others in '{}'",
                            m.seq, name(rank), m.what, round.what));
      return;
    }
    auto& slot = round.parts[static_cast<std::size_t>(rank)];
    if (slot) throw wire::ProtocolError(fmt::format("duplicate contribution to round {}", m.seq));
    if (!m.data.empty() &&
        (round.mode == wire::RoundMode::kFence || round.mode == wire::RoundMode::kHosts ||
         (round.mode == wire::RoundMode::kBroadcast && rank != 0))) {
      throw wire::ProtocolError(fmt::format("data in a round without data ('{}')", m.what));
    }
    slot = std::move(m.data);
    if (++round.have < size_) return;
    const std::uint64_t seq = it->first;
    const wire::RoundMode mode = round.mode;
    std::vector<Bytes> blobs;
    blobs.reserve(round.parts.size());
    for (auto& p : round.parts) blobs.push_back(std::move(*p));
    rounds_.erase(it);
    switch (mode) {
      case wire::RoundMode::kAllgather:
        broadcast(std::make_shared<const Bytes>(wire::encode(wire::Result{seq, std::move(blobs)})));
        break;
      case wire::RoundMode::kGather:
        if (Connection* root = connection_of(0)) {
          send_to(*root,
                  std::make_shared<const Bytes>(wire::encode(wire::Result{seq, std::move(blobs)})));
        }
        break;
      case wire::RoundMode::kFence:
        broadcast(std::make_shared<const Bytes>(wire::encode(wire::Result{seq, {}})));
        break;
      case wire::RoundMode::kBroadcast:
        blobs.resize(1);  // rank 0's
        broadcast(std::make_shared<const Bytes>(wire::encode(wire::Result{seq, std::move(blobs)})));
        break;
      case wire::RoundMode::kHosts:
        send_layouts(seq);
        break;
    }
  }

  // Every rank learns its place on its host and the host count; rank 0 also every rank's host.
  void send_layouts(std::uint64_t seq) {
    std::unordered_map<std::string_view, std::uint32_t> per_host;
    per_host.reserve(host_of_.size());
    std::vector<std::uint32_t> local_rank(host_of_.size());
    for (std::size_t r = 0; r < host_of_.size(); ++r) local_rank[r] = per_host[host_of_[r]]++;
    for (auto& c : conns_) {
      if (c->rank < 0 || !c->fd.valid()) continue;
      const auto r = static_cast<std::size_t>(c->rank);
      wire::Layout m{seq,
                     local_rank[r],
                     per_host[host_of_[r]],
                     static_cast<std::uint32_t>(per_host.size()),
                     host_of_[0],
                     {}};
      if (r == 0) m.hosts = host_of_;
      send_to(*c, std::make_shared<const Bytes>(wire::encode(m)));
    }
  }

  void put(int rank, wire::Put m) {
    if (m.key == wire::kHostKey) {
      throw wire::ProtocolError(fmt::format("'{}' is the server's own key", m.key));
    }
    if (m.value.size() > wire::kMaxPutValueBytes) {
      throw wire::ProtocolError(fmt::format("value of '{}' has {} bytes, above the limit of {}",
                                            m.key, m.value.size(), wire::kMaxPutValueBytes));
    }
    auto it = store_.find(m.key);
    if (it == store_.end()) {
      if (store_.size() >= wire::kMaxKeysPerJob) {
        throw wire::ProtocolError(
            fmt::format("more than {} keys published in this job", wire::kMaxKeysPerJob));
      }
      it = store_.emplace(m.key, std::vector<std::optional<Bytes>>(host_of_.size())).first;
    }
    it->second[static_cast<std::size_t>(rank)] = std::move(m.value);
  }

  void get(Connection& c, const wire::Get& m) {
    wire::Values answer{m.seq, {}, {}};
    answer.values.reserve(m.ranks.size());
    const bool host_key = m.key == wire::kHostKey;
    const auto it = store_.find(m.key);
    for (const std::uint32_t r : m.ranks) {
      if (r >= host_of_.size()) throw wire::ProtocolError(fmt::format("get of rank {}", r));
      if (host_key) {
        const std::string& h = host_of_[r];
        answer.values.emplace_back(reinterpret_cast<const std::byte*>(h.data()),
                                   reinterpret_cast<const std::byte*>(h.data()) + h.size());
        continue;
      }
      if (it == store_.end() || !it->second[r]) {
        answer.error = fmt::format("{} has not published '{}'", name(static_cast<int>(r)), m.key);
        answer.values.clear();
        break;
      }
      answer.values.push_back(*it->second[r]);
    }
    send_to(c, std::make_shared<const Bytes>(wire::encode(answer)));
  }

  Connection* connection_of(int rank) {
    for (auto& c : conns_) {
      if (c->rank == rank && c->fd.valid()) return c.get();
    }
    return nullptr;
  }

  void broadcast(const Frame& frame, int except_rank = -1) {
    for (auto& c : conns_) {
      if (c->rank >= 0 && c->rank != except_rank && c->fd.valid()) send_to(*c, frame);
    }
  }

  void expire(Clock::time_point now) {
    for (auto& c : conns_) {
      if (!c->fd.valid()) continue;
      if (c->rank < 0 && seconds_between(c->accepted_at, now) > limits_.hello_deadline_s) {
        refuse(*c, RefusalKind::kStalled,
               fmt::format("no complete hello within {:g} s ({} bytes received)",
                           limits_.hello_deadline_s, c->inbuf.size()));
        continue;
      }
      // A rank that has not read what it was sent for the job timeout is lost.
      if (!c->out.empty() && c->out_blocked_since != Clock::time_point{} &&
          seconds_between(c->out_blocked_since, now) > timeout_s_) {
        lost(*c, wire::AbortKind::kTimeout,
             fmt::format("stopped reading its bootstrap connection for {:.0f} s", timeout_s_),
             true);
      }
    }
    refusals_.flush(now);
    if (aborted_) return;
    for (const auto& [seq, round] : rounds_) {
      if (seconds_between(round.first_arrival, now) <= timeout_s_) continue;
      std::string missing;
      int count = 0;
      for (int r = 0; r < size_; ++r) {
        if (round.parts[static_cast<std::size_t>(r)]) continue;
        // Name the first few; at 10,000 ranks a list of all would be the message.
        if (++count > kNamedMissing) continue;
        if (!missing.empty()) missing += ", ";
        missing += host_of_[static_cast<std::size_t>(r)].empty()
                       ? fmt::format("rank {} (never connected)", r)
                       : name(r);
      }
      if (count > kNamedMissing)
        missing += fmt::format(" and {} more ranks", count - kNamedMissing);
      abort_all(wire::AbortKind::kTimeout,
                fmt::format("bootstrap '{}' timed out after {:.0f} s: {} never arrived", round.what,
                            timeout_s_, missing));
      return;
    }
  }

  Bytes encode_abort() const { return wire::encode(wire::Abort{abort_kind_, abort_reason_}); }

  void abort_all(wire::AbortKind kind, const std::string& reason, int except_rank = -1) {
    if (aborted_) return;
    aborted_ = true;
    abort_kind_ = kind;
    abort_reason_ = reason;
    broadcast(std::make_shared<const Bytes>(encode_abort()), except_rank);
    dirty_ = true;
  }

  // Queues `frame` and sends what the socket takes now; the rest goes when epoll says it can.
  void send_to(Connection& c, const Frame& frame) {
    if (!c.fd.valid()) return;
    c.out.push_back(frame);
    ++frames_out_;
    if (c.out.size() == 1) flush(c);
  }

  void flush(Connection& c) {
    while (!c.out.empty()) {
      const Bytes& f = *c.out.front();
      const ssize_t n = ::send(c.fd.get(), f.data() + c.out_offset, f.size() - c.out_offset,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (c.out_blocked_since == Clock::time_point{}) c.out_blocked_since = Clock::now();
        set_want_write(c, true);
        return;
      }
      if (n < 0) {
        lost(c, wire::AbortKind::kRemote, "exited or crashed: its bootstrap connection failed",
             false);
        return;
      }
      bytes_out_ += static_cast<std::uint64_t>(n);
      c.out_blocked_since = Clock::time_point{};
      c.out_offset += static_cast<std::size_t>(n);
      if (c.out_offset == f.size()) {
        c.out.pop_front();
        c.out_offset = 0;
      }
    }
    set_want_write(c, false);
  }

  std::string name(int rank) const {
    const std::string& h = host_of_[static_cast<std::size_t>(rank)];
    return h.empty() ? fmt::format("rank {}", rank) : fmt::format("rank {} ({})", rank, h);
  }

  static constexpr int kNamedMissing = 16;

  net::Fd listener_;
  net::Fd wake_read_, wake_write_;
  net::Fd epoll_;
  char wake_tag_ = 0;  // its address tags the wake pipe's events
  int size_;
  std::string token_;
  double timeout_s_;
  TcpStoreLimits limits_;
  std::atomic<int>& refused_;
  RefusalLog refusals_;
  GuessLimiter guesses_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::size_t pending_ = 0;               // unauthenticated connections open
  bool dirty_ = false;                    // a connection closed or said goodbye: sweep and recount
  bool accept_paused_ = false;            // out of descriptors: the listener is unwatched until
  Clock::time_point accept_resume_at_{};  // this time (free_a_descriptor)
  bool fd_warned_ = false;
  Clock::time_point last_fd_warning_{};
  std::map<std::uint64_t, Round> rounds_;
  std::unordered_map<std::string, std::vector<std::optional<Bytes>>> store_;  // key -> by rank
  std::vector<std::string> host_of_;
  std::vector<bool> said_bye_;
  std::vector<bool> connected_;
  bool aborted_ = false;
  wire::AbortKind abort_kind_ = wire::AbortKind::kRemote;
  std::string abort_reason_;
  const Frame welcome_ = std::make_shared<const Bytes>(wire::encode_empty(wire::MsgType::kWelcome));
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> bytes_in_{0}, bytes_out_{0}, frames_in_{0}, frames_out_{0};
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool finished_ = false;
  bool all_gone_ = false;
};

TcpStoreServer::TcpStoreServer(net::Fd listener, int size, std::string token, double timeout_s,
                               TcpStoreLimits limits)
    : port_(net::bound_port(listener.get())) {
  check_fd_limit(size);
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

TcpStoreTraffic TcpStoreServer::traffic() const noexcept { return impl_->traffic(); }

}  // namespace ibscope::bootstrap
