#include "ibscope/bootstrap/launch_env.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "ibscope/bootstrap/netns_placement.hpp"
#include "ibscope/bootstrap/tcp_bootstrap.hpp"
#include "ibscope/build_info.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/log.hpp"

#ifdef IBSCOPE_HAVE_PMIX
#include "ibscope/bootstrap/pmix_bootstrap.hpp"
#endif

namespace ibscope::bootstrap {
namespace {

std::optional<int> env_int(const GetEnv& getenv, const char* name) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  int out = 0;
  const auto [end, ec] = std::from_chars(v, v + std::strlen(v), out);
  if (ec != std::errc() || *end != '\0') {
    throw UsageError(fmt::format("environment variable {}='{}' is not an integer", name, v));
  }
  return out;
}

struct RankVars {
  const char* rank;
  const char* size;
};
constexpr RankVars kLauncherVars[] = {
    {"SLURM_PROCID", "SLURM_NTASKS"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
};

void check_range(const LaunchEnv& e) {
  if (e.size < 1 || e.rank < 0 || e.rank >= e.size) {
    throw UsageError(fmt::format("{} gives rank {} of job size {}: out of range", e.rank_source,
                                 e.rank, e.size));
  }
}

LaunchEnv detect_launcher(const GetEnv& getenv, bool have_pmix) {
  LaunchEnv e;
  if (const char* r = getenv("IBSCOPE_ROOT"); r != nullptr && *r != '\0') e.root = r;
  if (const char* t = getenv("IBSCOPE_TOKEN"); t != nullptr) e.token = t;
  if (auto fd = env_int(getenv, "IBSCOPE_ROOT_FD")) e.listen_fd = *fd;

  std::string forced;
  if (const char* f = getenv("IBSCOPE_BOOTSTRAP"); f != nullptr) forced = f;
  if (!forced.empty() && forced != "auto" && forced != "pmix" && forced != "tcp" &&
      forced != "local") {
    throw UsageError(
        fmt::format("IBSCOPE_BOOTSTRAP='{}': expected auto, pmix, tcp or local", forced));
  }
  if (forced == "local") return e;

  const bool pmix_env = getenv("PMIX_RANK") != nullptr && getenv("PMIX_NAMESPACE") != nullptr;
  const bool auto_pmix = (forced.empty() || forced == "auto") && pmix_env && have_pmix &&
                         !env_int(getenv, "IBSCOPE_RANK");
  if (forced == "pmix" || auto_pmix) {
    if (!have_pmix) {
      throw UsageError(
          "IBSCOPE_BOOTSTRAP=pmix but this ibscope was built without PMIx "
          "(install libpmix-dev and rebuild)");
    }
    e.kind = LaunchKind::kPmix;
    e.rank_source = "PMIx";
    return e;
  }

  if (auto r = env_int(getenv, "IBSCOPE_RANK")) {
    e.kind = LaunchKind::kTcp;
    e.rank = *r;
    e.size = env_int(getenv, "IBSCOPE_SIZE").value_or(-1);
    e.rank_source = "IBSCOPE_RANK/IBSCOPE_SIZE";
  } else {
    for (const auto& v : kLauncherVars) {
      const auto r2 = env_int(getenv, v.rank);
      const auto s2 = env_int(getenv, v.size);
      if (r2 && s2) {
        e.kind = LaunchKind::kTcp;
        e.rank = *r2;
        e.size = *s2;
        e.rank_source = fmt::format("{}/{}", v.rank, v.size);
        break;
      }
    }
  }
  if (e.kind != LaunchKind::kTcp) {
    if (forced == "tcp") {
      throw UsageError(
          "IBSCOPE_BOOTSTRAP=tcp but no rank/size found: set IBSCOPE_RANK and "
          "IBSCOPE_SIZE, or run under srun/mpirun");
    }
    return e;  // no launcher: the local launcher forks the ranks
  }
  check_range(e);
  if (!e.root) {
    throw UsageError(fmt::format(
        "started by a launcher ({} = {}/{}) but {}: export IBSCOPE_ROOT=<rank-0 host>:<port> "
        "(and IBSCOPE_TOKEN=<secret>) on every rank, or launch with PMIx (srun --mpi=pmix, "
        "mpirun)",
        e.rank_source, e.rank, e.size,
        have_pmix ? "no PMIx server was found and IBSCOPE_ROOT is unset"
                  : "this build has no PMIx and IBSCOPE_ROOT is unset"));
  }
  return e;
}

}  // namespace

LaunchEnv detect_launch(const GetEnv& getenv, bool have_pmix) {
  LaunchEnv e = detect_launcher(getenv, have_pmix);
  // IBSCOPE_NETNS moves a rank after it joined the job (netns_placement.hpp); only PMIx keeps
  // working across the move. The TCP store's root (IBSCOPE_ROOT) listens in the launcher's
  // namespace, and a rank that can be started inside its namespace needs no move.
  if (const char* n = getenv(kNetnsEnv);
      n != nullptr && *n != '\0' && e.kind != LaunchKind::kPmix) {
    throw UsageError(fmt::format(
        "{}='{}' works with the PMIx bootstrap only (srun --mpi=pmix, mpirun), but this job "
        "uses {}: start each rank inside its namespace instead (ip netns exec NAME ibscope ..., "
        "as tests/netns/run_ranks.sh does, with IBSCOPE_ROOT reachable from there) and unset {}",
        kNetnsEnv, n,
        e.kind == LaunchKind::kTcp ? fmt::format("the TCP store ({})", e.rank_source)
                                   : std::string("the local launcher (no launcher found)"),
        kNetnsEnv));
  }
  return e;
}

LaunchEnv detect_launch_from_process_env() {
  return detect_launch([](const char* name) { return std::getenv(name); }, build::kHavePmix);
}

std::unique_ptr<Bootstrap> connect_bootstrap(const LaunchEnv& env, double timeout_s) {
  switch (env.kind) {
    case LaunchKind::kPmix:
#ifdef IBSCOPE_HAVE_PMIX
      return make_pmix_bootstrap(timeout_s);
#else
      throw UsageError("PMIx bootstrap requested but this ibscope was built without PMIx");
#endif
    case LaunchKind::kTcp: {
      TcpBootstrapOptions o;
      o.rank = env.rank;
      o.size = env.size;
      o.timeout_s = timeout_s;
      o.root = net::parse_host_port(*env.root, "IBSCOPE_ROOT");
      o.token = env.token.value_or("");
      o.inherited_listen_fd = env.rank == 0 ? env.listen_fd : -1;
      return make_tcp_bootstrap(o);
    }
    case LaunchKind::kLocal:
      return make_single_bootstrap(timeout_s);
  }
  throw UsageError("unknown launch kind");
}

}  // namespace ibscope::bootstrap
