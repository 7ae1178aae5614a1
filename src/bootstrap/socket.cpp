#include "ibscope/bootstrap/socket.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

#include "ibscope/core/error.hpp"
#include "ibscope/core/interrupt.hpp"

namespace ibscope::bootstrap::net {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

Fd::~Fd() { reset(); }

void Fd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string HostPort::str() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
}

HostPort parse_host_port(std::string_view text, std::string_view what) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    throw UsageError(fmt::format("{}: '{}' is not host:port (example: node01:29500)", what, text));
  }
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535) {
    throw UsageError(fmt::format("{}: '{}' has an invalid port (0..65535)", what, text));
  }
  return HostPort{std::string(host), static_cast<std::uint16_t>(port)};
}

namespace {

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list != nullptr) freeaddrinfo(list);
  }
};

void resolve(const HostPort& where, bool passive, AddrInfo& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string port = std::to_string(where.port);
  const int rc = getaddrinfo(where.host.empty() ? nullptr : where.host.c_str(), port.c_str(),
                             &hints, &out.list);
  if (rc != 0) {
    throw Error(ErrorKind::kSystem,
                fmt::format("cannot resolve '{}': {}", where.str(), gai_strerror(rc)));
  }
}

}  // namespace

Fd listen_tcp(const HostPort& where, int backlog) {
  AddrInfo ai;
  resolve(where, true, ai);
  int last_errno = 0;
  for (addrinfo* a = ai.list; a != nullptr; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      last_errno = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd.get(), backlog) == 0) {
      return fd;
    }
    last_errno = errno;
  }
  throw SystemError(fmt::format("cannot listen on {}", where.str()), last_errno);
}

std::uint16_t bound_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    throw SystemError("getsockname", errno);
  }
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

std::string peer_name(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "unknown peer";
  char host[NI_MAXHOST] = {};
  char port[NI_MAXSERV] = {};
  if (getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof(host), port, sizeof(port),
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "unknown peer";
  }
  return fmt::format("{}:{}", host, port);
}

Fd connect_tcp(const HostPort& where, const Deadline& deadline, std::string_view who) {
  int last_errno = 0;
  while (true) {
    AddrInfo ai;
    resolve(where, false, ai);
    for (addrinfo* a = ai.list; a != nullptr; a = a->ai_next) {
      Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
      if (!fd.valid()) {
        last_errno = errno;
        continue;
      }
      if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) {
        const int one = 1;
        ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return fd;
      }
      last_errno = errno;
    }
    if (deadline.expired()) {
      throw TimeoutError(fmt::format("could not reach {} at {} within {:.0f} s (last error: {})",
                                     who, where.str(), deadline.budget_s(),
                                     last_errno != 0 ? std::strerror(last_errno) : "none"));
    }
    // A rank whose signal came before it reached rank 0 (which stopped on the same signal and
    // refuses connections now) stops here, not at the deadline.
    throw_if_interrupted();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw SystemError("bootstrap socket send", errno);
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

bool read_exact(int fd, void* data, std::size_t bytes, const Deadline& deadline) {
  auto* p = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < bytes) {
    pollfd pfd{fd, POLLIN, 0};
    // No interrupt check here: this runs on the bootstrap's reader thread, where a signal must
    // not pass for a lost connection; the waiting rank thread looks at the flag itself.
    const double left_s = deadline.remaining_s();
    const int wait_ms = left_s > 0.2 ? 200 : std::max(0, static_cast<int>(left_s * 1000) + 1);
    const int pr = ::poll(&pfd, 1, wait_ms);
    if (pr < 0) {
      if (errno == EINTR) continue;
      throw SystemError("bootstrap socket poll", errno);
    }
    if (pr == 0) {
      if (!deadline.expired()) continue;
      throw TimeoutError(
          fmt::format("bootstrap socket: no data within {:.0f} s", deadline.budget_s()));
    }
    const ssize_t n = ::recv(fd, p + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw SystemError("bootstrap socket receive", errno);
    }
    if (n == 0) {
      if (got == 0) return false;
      throw SystemError("bootstrap socket: connection closed mid-message", ECONNRESET);
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace ibscope::bootstrap::net
