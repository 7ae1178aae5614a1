#include "ibscope/bootstrap/netns_placement.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "ibscope/core/error.hpp"

namespace ibscope::bootstrap {
namespace {

constexpr std::size_t kMaxNameBytes = 255;  // NAME_MAX: the name is a file under /run/netns

/// Closes the namespace file descriptor on every path.
class Fd {
 public:
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string expand_netns_template(std::string_view tmpl, int rank, int local_rank, int size) {
  if (tmpl.empty()) throw UsageError(fmt::format("{} is empty", kNetnsEnv));
  std::string out;
  bool placeholder = false;
  for (std::size_t i = 0; i < tmpl.size();) {
    if (tmpl[i] == '}') {
      throw UsageError(fmt::format("{}='{}': '}}' without '{{' at offset {}", kNetnsEnv, tmpl, i));
    }
    if (tmpl[i] != '{') {
      out.push_back(tmpl[i++]);
      continue;
    }
    const auto close = tmpl.find('}', i);
    if (close == std::string_view::npos) {
      throw UsageError(fmt::format("{}='{}': '{{' without '}}' at offset {}", kNetnsEnv, tmpl, i));
    }
    const std::string_view field = tmpl.substr(i + 1, close - i - 1);
    if (field == "rank") {
      out += std::to_string(rank);
    } else if (field == "local_rank") {
      out += std::to_string(local_rank);
    } else {
      throw UsageError(
          fmt::format("{}='{}': unknown placeholder '{{{}}}' (known: {{rank}}, "
                      "{{local_rank}})",
                      kNetnsEnv, tmpl, field));
    }
    placeholder = true;
    i = close + 1;
  }
  if (!placeholder && size > 1) {
    throw UsageError(
        fmt::format("{}='{}' has no {{rank}} or {{local_rank}}: all {} ranks would enter the same "
                    "namespace; use e.g. {}='{}{{rank}}'",
                    kNetnsEnv, tmpl, size, kNetnsEnv, tmpl));
  }
  if (out == "." || out == ".." || out.find('/') != std::string::npos ||
      out.size() > kMaxNameBytes) {
    throw UsageError(
        fmt::format("{}='{}' gives '{}', which cannot name a network namespace "
                    "(a file name under {}: no '/', not '.' or '..', at most {} "
                    "bytes)",
                    kNetnsEnv, tmpl, out, kNetnsDir, kMaxNameBytes));
  }
  return out;
}

void enter_netns(const std::string& name, const std::string& dir) {
  const std::string path = dir + "/" + name;
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) {
      throw UsageError(fmt::format(
          "network namespace '{}' does not exist ({} is missing): create it first, e.g. "
          "`ip netns add {}` (or tests/netns/hosts.sh up N for emulated hosts)",
          name, path, name));
    }
    throw SystemError(fmt::format("open network namespace {}", path), err);
  }
  if (::setns(fd.get(), CLONE_NEWNET) != 0) {
    const int err = errno;
    if (err == EPERM) {
      throw SystemError(fmt::format("setns into network namespace {} not permitted (entering a "
                                    "namespace needs CAP_SYS_ADMIN: run the ranks as root or "
                                    "grant the capability)",
                                    path),
                        err);
    }
    if (err == EINVAL) {
      throw UsageError(
          fmt::format("{} is not a network namespace (a stale file? remove it and "
                      "run `ip netns add {}`)",
                      path, name));
    }
    throw SystemError(fmt::format("setns into network namespace {}", path), err);
  }
}

namespace {
bool g_mounts_detached = false;  // set once, before any thread exists
}  // namespace

void detach_mounts_for_netns() {
  if (g_mounts_detached) return;
  if (::unshare(CLONE_NEWNS) != 0) {
    const int err = errno;
    throw SystemError(
        err == EPERM ? "unshare(CLONE_NEWNS) for IBSCOPE_NETNS not permitted (a private mount "
                       "namespace, to mount the rank's /sys, needs CAP_SYS_ADMIN)"
        : err == EINVAL
            ? "unshare(CLONE_NEWNS) for IBSCOPE_NETNS refused: threads already run in this "
              "process (it must happen before PMIx_Init)"
            : "unshare(CLONE_NEWNS) for IBSCOPE_NETNS",
        err);
  }
  // Our later mount of /sys must not propagate back to the host's mount namespace.
  if (::mount(nullptr, "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) {
    throw SystemError("mount --make-rslave / (private mounts for IBSCOPE_NETNS)", errno);
  }
  g_mounts_detached = true;
}

bool mounts_detached_for_netns() noexcept { return g_mounts_detached; }

std::string netns_template_from_env() {
  const char* v = std::getenv(kNetnsEnv);
  return v == nullptr ? std::string() : std::string(v);
}

std::string place_rank_into_netns(std::string_view tmpl, int rank, int local_rank, int size,
                                  const std::string& dir) {
  const std::string name = expand_netns_template(tmpl, rank, local_rank, size);
  enter_netns(name, dir);
  if (g_mounts_detached) {
    // A sysfs mounted from inside the namespace lists its devices in /sys/class/net (what
    // `ip netns exec` does); the old one, lazily detached, lists the launcher's.
    if (::umount2("/sys", MNT_DETACH) != 0 && errno != EINVAL) {
      throw SystemError("umount /sys (to mount the sysfs of network namespace " + name + ")",
                        errno);
    }
    if (::mount(name.c_str(), "/sys", "sysfs", 0, nullptr) != 0) {
      throw SystemError("mount the sysfs of network namespace " + name + " on /sys", errno);
    }
  }
  // local_hostname() reads IBSCOPE_HOSTNAME; an explicit one (a test's own label) wins. setenv
  // runs before UCX starts and before any thread of ours reads the environment.
  if (const char* h = std::getenv("IBSCOPE_HOSTNAME"); h == nullptr || *h == '\0') {
    if (::setenv("IBSCOPE_HOSTNAME", name.c_str(), 1) != 0) {
      throw SystemError("setenv IBSCOPE_HOSTNAME", errno);
    }
  }
  return name;
}

}  // namespace ibscope::bootstrap
