#pragma once
/// TCP sockets for the bootstrap: an owning file descriptor, connect/listen by "host:port",
/// and whole-buffer reads and writes with deadlines. Errors are SystemError/TimeoutError.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ibscope/core/clock.hpp"

namespace ibscope::bootstrap::net {

/// Owning file descriptor: move-only, closes in its noexcept destructor.
class Fd {
 public:
  Fd() noexcept = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
  std::string str() const;
};

/// Parses "host:port" or "[v6addr]:port". Throws UsageError naming `what`.
HostPort parse_host_port(std::string_view text, std::string_view what);

/// Listens on host:port (port 0 = any free port). Throws SystemError.
Fd listen_tcp(const HostPort& where, int backlog = 4096);
/// The port a listening socket is bound to.
std::uint16_t bound_port(int fd);
/// "ip:port" of the peer of a connected socket.
std::string peer_name(int fd);

/// Connects, retrying refused connections until `deadline` (the server may not listen yet).
/// Throws TimeoutError naming `who` when the deadline passes, InterruptedError when a signal
/// stopped the run meanwhile (core/interrupt.hpp).
Fd connect_tcp(const HostPort& where, const Deadline& deadline, std::string_view who);

/// Writes the whole buffer (blocking socket). Throws SystemError on failure.
void write_all(int fd, const void* data, std::size_t bytes);
/// Reads exactly `bytes`; returns false on orderly EOF before the first byte. Throws
/// SystemError on error or EOF in the middle, TimeoutError when the deadline passes.
bool read_exact(int fd, void* data, std::size_t bytes, const Deadline& deadline);

}  // namespace ibscope::bootstrap::net
