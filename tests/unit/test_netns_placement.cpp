// IBSCOPE_NETNS: the template expansion (pure), entering a namespace (real setns(2) in forked
// children, so this test process never changes namespace), its errors, and the refusal of the
// bootstraps that cannot follow a rank into its namespace.

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ibscope/bootstrap/bootstrap.hpp"
#include "ibscope/bootstrap/launch_env.hpp"
#include "ibscope/bootstrap/netns_placement.hpp"
#include "ibscope/core/error.hpp"

using Catch::Matchers::Contains;
using ibscope::SystemError;
using ibscope::UsageError;
using ibscope::bootstrap::enter_netns;
using ibscope::bootstrap::expand_netns_template;

namespace {

std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a UsageError: ") + e.what() + ">";
  }
  return "<no error>";
}

/// Runs `body` in a forked child; returns what it wrote to the pipe (its verdict) and requires
/// a clean exit. The child never returns into Catch.
std::string in_child(const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    try {
      out = body();
    } catch (const std::exception& e) {
      out = std::string("<exception: ") + e.what() + ">";
    }
    const auto n = ::write(fds[1], out.data(), out.size());
    ::_exit(n == static_cast<ssize_t>(out.size()) ? 0 : 3);
  }
  ::close(fds[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, std::size_t(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return got;
}

std::string netns_inode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "<stat failed>";
  return std::to_string(st.st_ino);
}

}  // namespace

TEST_CASE("IBSCOPE_NETNS template: {rank} and {local_rank}", "[netns]") {
  CHECK(expand_netns_template("ibs-h{rank}", 3, 1, 4) == "ibs-h3");
  CHECK(expand_netns_template("ibs-h{local_rank}", 3, 1, 4) == "ibs-h1");
  CHECK(expand_netns_template("n{rank}-l{local_rank}x", 12, 0, 16) == "n12-l0x");
  CHECK(expand_netns_template("{rank}", 0, 0, 1) == "0");
  // One rank may name its namespace outright.
  CHECK(expand_netns_template("lab", 0, 0, 1) == "lab");
}

TEST_CASE("IBSCOPE_NETNS template errors say what is wrong", "[netns]") {
  CHECK_THAT(
      usage_error_of([] { expand_netns_template("ibs-h0", 1, 1, 4); }),
      Contains("no {rank} or {local_rank}") && Contains("all 4 ranks") && Contains("ibs-h0{rank}"));
  CHECK_THAT(usage_error_of([] { expand_netns_template("h{node}", 0, 0, 2); }),
             Contains("unknown placeholder '{node}'"));
  CHECK_THAT(usage_error_of([] { expand_netns_template("h{rank", 0, 0, 2); }),
             Contains("'{' without '}'"));
  CHECK_THAT(usage_error_of([] { expand_netns_template("h}{rank}", 0, 0, 2); }),
             Contains("'}' without '{'"));
  CHECK_THAT(usage_error_of([] { expand_netns_template("", 0, 0, 1); }), Contains("is empty"));
  CHECK_THAT(usage_error_of([] { expand_netns_template("a/{rank}", 0, 0, 2); }),
             Contains("cannot name a network namespace"));
  CHECK_THAT(usage_error_of([] { expand_netns_template("..", 0, 0, 1); }),
             Contains("cannot name a network namespace"));
  CHECK_THAT(
      usage_error_of([] { expand_netns_template(std::string(300, 'h') + "{rank}", 0, 0, 2); }),
      Contains("at most 255 bytes"));
}

TEST_CASE("entering a namespace that does not exist says how to create it", "[netns]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ibscope-netns-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CHECK_THAT(usage_error_of([&] { enter_netns("ibs-h7", dir.string()); }),
             Contains("network namespace 'ibs-h7' does not exist") &&
                 Contains("ip netns add ibs-h7") && Contains("hosts.sh"));
  // A leftover plain file is not a namespace: setns refuses it (EINVAL), whoever we are.
  std::ofstream(dir / "stale") << "x";
  const std::string stale =
      in_child([&] { return usage_error_of([&] { enter_netns("stale", dir.string()); }); });
  CHECK_THAT(stale, Contains("is not a network namespace"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("setns without CAP_SYS_ADMIN is refused with the capability named", "[netns]") {
  // A real refusal: a child that is (or becomes) an unprivileged user tries to enter its own
  // network namespace through /proc/self/ns/net, which needs CAP_SYS_ADMIN all the same.
  const std::string msg = in_child([] {
    if (::geteuid() == 0 && ::setresuid(65534, 65534, 65534) != 0)
      return std::string("<setresuid>");
    try {
      enter_netns("net", "/proc/self/ns");
    } catch (const SystemError& e) {
      return std::string(e.what());
    }
    return std::string("<entered>");
  });
  CHECK_THAT(msg, Contains("not permitted") && Contains("CAP_SYS_ADMIN"));
}

TEST_CASE("a rank enters its namespace and is named after it", "[netns]") {
  if (::geteuid() != 0) {
    WARN("not root: cannot create a network namespace, entering one not tested");
    return;
  }
  // Each child makes a fresh namespace (unshare), then place_rank_into_netns takes it back into
  // this test's namespace, found through a directory entry that links to it (as /run/netns/NAME
  // is a bind mount of one): the thread really moves, and the host label follows the name.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ibscope-netns-enter-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink("/proc/" + std::to_string(::getpid()) + "/ns/net", dir / "home3");
  const std::string parent_ns = netns_inode("/proc/self/ns/net");
  const auto place = [&](const char* hostname) {
    return in_child([&] {
      if (::unshare(CLONE_NEWNET) != 0) return std::string("<unshare failed>");
      if (netns_inode("/proc/self/ns/net") == parent_ns) return std::string("<unshare kept it>");
      if (hostname != nullptr) {
        ::setenv("IBSCOPE_HOSTNAME", hostname, 1);
      } else {
        ::unsetenv("IBSCOPE_HOSTNAME");
      }
      const std::string name =
          ibscope::bootstrap::place_rank_into_netns("home{rank}", 3, 0, 4, dir.string());
      const bool back = netns_inode("/proc/self/ns/net") == parent_ns;
      return fmt::format("{} {} {}", name, back ? "entered" : "not-entered",
                         ibscope::bootstrap::local_hostname());
    });
  };
  CHECK(place(nullptr) == "home3 entered home3");
  CHECK(place("given-label") == "home3 entered given-label");
  std::filesystem::remove_all(dir);
}

TEST_CASE("with private mounts, /sys/class/net shows the entered namespace's devices", "[netns]") {
  if (::geteuid() != 0) {
    WARN("not root: cannot create a network namespace or mount sysfs, not tested");
    return;
  }
  // A helper process holds a fresh network namespace (only 'lo'); a forked "rank" detaches its
  // mounts, as the PMIx bootstrap does before PMIx_Init, and is placed into it. UCX lists
  // devices from /sys/class/net: the rank must see only the namespace's, and this test
  // process (the host) must still see its own afterwards.
  const auto net_devices = [] {
    std::string names;
    std::error_code ec;
    std::vector<std::string> v;
    for (const auto& e : std::filesystem::directory_iterator("/sys/class/net", ec)) {
      v.push_back(e.path().filename().string());
    }
    std::sort(v.begin(), v.end());
    for (const auto& n : v) names += n + " ";
    return names;
  };
  const std::string host_devices = net_devices();
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t holder = ::fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    char ok = ::unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
    (void)!::write(ready[1], &ok, 1);
    ::pause();
    ::_exit(0);
  }
  char ok = 'n';
  (void)!::read(ready[0], &ok, 1);
  ::close(ready[0]);
  ::close(ready[1]);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ibscope-netns-sysfs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink("/proc/" + std::to_string(holder) + "/ns/net", dir / "fresh0");
  const std::string seen = ok != 'y' ? "<holder could not unshare>" : in_child([&] {
    ibscope::bootstrap::detach_mounts_for_netns();
    if (!ibscope::bootstrap::mounts_detached_for_netns()) return std::string("<not detached>");
    ibscope::bootstrap::place_rank_into_netns("fresh{rank}", 0, 0, 1, dir.string());
    return net_devices();
  });
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  std::filesystem::remove_all(dir);
  CHECK(seen == "lo ");
  CHECK(net_devices() == host_devices);  // nothing leaked into the host's mounts
}

TEST_CASE("IBSCOPE_NETNS is refused where the bootstrap cannot follow the rank", "[netns]") {
  using Env = std::map<std::string, std::string>;
  const auto detect = [](const Env& env, bool have_pmix) {
    return ibscope::bootstrap::detect_launch(
        [&env](const char* name) -> const char* {
          const auto it = env.find(name);
          return it == env.end() ? nullptr : it->second.c_str();
        },
        have_pmix);
  };
  const Env tcp{{"IBSCOPE_NETNS", "ibs-h{rank}"},
                {"SLURM_PROCID", "1"},
                {"SLURM_NTASKS", "4"},
                {"IBSCOPE_ROOT", "10.0.0.1:29500"}};
  CHECK_THAT(usage_error_of([&] { detect(tcp, false); }),
             Contains("IBSCOPE_NETNS='ibs-h{rank}' works with the PMIx bootstrap only") &&
                 Contains("TCP store (SLURM_PROCID/SLURM_NTASKS)") && Contains("ip netns exec"));
  CHECK_THAT(usage_error_of([&] {
               detect({{"IBSCOPE_NETNS", "ibs-h{rank}"}}, true);
             }),
             Contains("the local launcher"));
  const Env pmix{{"IBSCOPE_NETNS", "ibs-h{rank}"}, {"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "x"}};
  CHECK(detect(pmix, true).kind == ibscope::bootstrap::LaunchKind::kPmix);
  CHECK(detect({{"IBSCOPE_NETNS", ""}}, false).kind == ibscope::bootstrap::LaunchKind::kLocal);
}
