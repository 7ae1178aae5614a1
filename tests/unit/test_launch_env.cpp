// detect_launch: which launcher started us, from an environment passed in as a map. Also the
// bootstraps that connect_bootstrap builds without any launcher (single, and TCP of size 1).

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <utility>

#include "ibscope/bootstrap/launch_env.hpp"
#include "ibscope/bootstrap/socket.hpp"
#include "ibscope/core/error.hpp"

using Catch::Matchers::Contains;
using ibscope::UsageError;
using ibscope::bootstrap::detect_launch;
using ibscope::bootstrap::LaunchEnv;
using ibscope::bootstrap::LaunchKind;

namespace {

using Env = std::map<std::string, std::string>;

LaunchEnv detect(const Env& env, bool have_pmix = false) {
  return detect_launch(
      [&env](const char* name) -> const char* {
        const auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      have_pmix);
}

// what() of the UsageError that detect() throws, or a marker string.
std::string usage_error(const Env& env, bool have_pmix = false) {
  try {
    (void)detect(env, have_pmix);
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a UsageError: ") + e.what() + ">";
  }
  return "<no exception>";
}

const Env kRoot = {{"IBSCOPE_ROOT", "node01:29500"}};

Env with(Env base, const Env& more) {
  for (const auto& [k, v] : more) base[k] = v;
  return base;
}

}  // namespace

TEST_CASE("detect_launch: no launcher means local", "[launch_env]") {
  for (const bool have_pmix : {false, true}) {
    const LaunchEnv e = detect({}, have_pmix);
    CHECK(e.kind == LaunchKind::kLocal);
    CHECK(e.rank == -1);
    CHECK(e.size == -1);
    CHECK_FALSE(e.root.has_value());
    CHECK_FALSE(e.token.has_value());
    CHECK(e.listen_fd == -1);
  }
  // IBSCOPE_ROOT alone, or only half of a launcher's pair, is not a launcher.
  CHECK(detect(kRoot).kind == LaunchKind::kLocal);
  CHECK(detect(with(kRoot, {{"SLURM_PROCID", "1"}})).kind == LaunchKind::kLocal);
  CHECK(detect({{"PMIX_RANK", "0"}}, true).kind == LaunchKind::kLocal);
  // Empty values count as unset.
  CHECK(detect({{"IBSCOPE_RANK", ""}, {"SLURM_PROCID", ""}, {"SLURM_NTASKS", ""}}).kind ==
        LaunchKind::kLocal);
  CHECK_FALSE(detect({{"IBSCOPE_ROOT", ""}}).root.has_value());
}

TEST_CASE("detect_launch: IBSCOPE_RANK/SIZE from the local launcher", "[launch_env]") {
  const LaunchEnv e = detect({{"IBSCOPE_RANK", "2"},
                              {"IBSCOPE_SIZE", "4"},
                              {"IBSCOPE_ROOT", "127.0.0.1:4000"},
                              {"IBSCOPE_TOKEN", "s3cret"},
                              {"IBSCOPE_ROOT_FD", "7"}});
  CHECK(e.kind == LaunchKind::kTcp);
  CHECK(e.rank == 2);
  CHECK(e.size == 4);
  CHECK(e.rank_source == "IBSCOPE_RANK/IBSCOPE_SIZE");
  CHECK(e.root == std::optional<std::string>("127.0.0.1:4000"));
  CHECK(e.token == std::optional<std::string>("s3cret"));
  CHECK(e.listen_fd == 7);

  // An empty token is still a token (distinct from unset).
  CHECK(detect(with(kRoot, {{"IBSCOPE_RANK", "0"}, {"IBSCOPE_SIZE", "1"}, {"IBSCOPE_TOKEN", ""}}))
            .token == std::optional<std::string>(""));

  // The local launcher's variables win over PMIx and over an outer launcher's.
  const Env nested = with(kRoot, {{"IBSCOPE_RANK", "1"},
                                  {"IBSCOPE_SIZE", "2"},
                                  {"PMIX_RANK", "5"},
                                  {"PMIX_NAMESPACE", "job.1"},
                                  {"SLURM_PROCID", "5"},
                                  {"SLURM_NTASKS", "8"}});
  const LaunchEnv n = detect(nested, true);
  CHECK(n.kind == LaunchKind::kTcp);
  CHECK(n.rank == 1);
  CHECK(n.size == 2);
  CHECK(n.rank_source == "IBSCOPE_RANK/IBSCOPE_SIZE");
}

TEST_CASE("detect_launch: a launcher's rank variables with IBSCOPE_ROOT", "[launch_env]") {
  const struct {
    const char* rank_var;
    const char* size_var;
  } launchers[] = {
      {"SLURM_PROCID", "SLURM_NTASKS"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
  };
  for (const auto& l : launchers) {
    for (const bool have_pmix : {false, true}) {
      INFO(l.rank_var << " have_pmix=" << have_pmix);
      const LaunchEnv e = detect(with(kRoot, {{l.rank_var, "3"}, {l.size_var, "16"}}), have_pmix);
      CHECK(e.kind == LaunchKind::kTcp);
      CHECK(e.rank == 3);
      CHECK(e.size == 16);
      CHECK(e.rank_source == std::string(l.rank_var) + "/" + l.size_var);
      CHECK(e.root == std::optional<std::string>("node01:29500"));
      CHECK_FALSE(e.token.has_value());
    }
  }
  // With several launchers' variables, Slurm's are read first.
  const LaunchEnv e = detect(with(kRoot, {{"SLURM_PROCID", "1"},
                                          {"SLURM_NTASKS", "2"},
                                          {"OMPI_COMM_WORLD_RANK", "3"},
                                          {"OMPI_COMM_WORLD_SIZE", "4"}}));
  CHECK(e.rank_source == "SLURM_PROCID/SLURM_NTASKS");
  CHECK(e.rank == 1);
}

TEST_CASE("detect_launch: a launcher without IBSCOPE_ROOT or PMIx is a usage error",
          "[launch_env]") {
  const Env slurm = {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}};
  for (const bool have_pmix : {false, true}) {
    INFO("have_pmix=" << have_pmix);
    const std::string msg = usage_error(slurm, have_pmix);
    CHECK_THAT(
        msg, Contains("IBSCOPE_ROOT") && Contains("SLURM_PROCID/SLURM_NTASKS") && Contains("PMIx"));
  }
  // PMIx variables present but this build has no PMIx: still needs IBSCOPE_ROOT.
  CHECK_THAT(usage_error(with(slurm, {{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "ns"}}), false),
             Contains("IBSCOPE_ROOT") && Contains("no PMIx"));
  CHECK_THAT(usage_error({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
             Contains("IBSCOPE_ROOT"));
  CHECK_THAT(usage_error({{"IBSCOPE_RANK", "0"}, {"IBSCOPE_SIZE", "2"}}), Contains("IBSCOPE_ROOT"));
}

TEST_CASE("detect_launch: PMIx", "[launch_env]") {
  const Env pmix = {{"PMIX_RANK", "3"}, {"PMIX_NAMESPACE", "slurm.pmix.42.0"}};
  const LaunchEnv e = detect(pmix, true);
  CHECK(e.kind == LaunchKind::kPmix);
  CHECK(e.rank_source == "PMIx");

  // PMIx wins over the launcher's own variables and IBSCOPE_ROOT when it is available.
  CHECK(
      detect(with(with(pmix, kRoot), {{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}}), true).kind ==
      LaunchKind::kPmix);
  // Without PMIx in the build, the launcher's variables and IBSCOPE_ROOT are used instead.
  const LaunchEnv fallback =
      detect(with(with(pmix, kRoot), {{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}}), false);
  CHECK(fallback.kind == LaunchKind::kTcp);
  CHECK(fallback.rank == 3);
  // Without PMIx and without a launcher's rank variables, there is nothing to join: local.
  CHECK(detect(pmix, false).kind == LaunchKind::kLocal);
}

TEST_CASE("detect_launch: IBSCOPE_BOOTSTRAP forces a choice", "[launch_env]") {
  const Env everything = with(
      kRoot,
      {{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "ns"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}});
  SECTION("local") {
    for (const bool have_pmix : {false, true}) {
      const LaunchEnv e = detect(with(everything, {{"IBSCOPE_BOOTSTRAP", "local"}}), have_pmix);
      CHECK(e.kind == LaunchKind::kLocal);
      CHECK(e.rank == -1);
    }
    // Even a launcher without IBSCOPE_ROOT is fine when local is forced.
    CHECK(detect({{"IBSCOPE_BOOTSTRAP", "local"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}})
              .kind == LaunchKind::kLocal);
  }
  SECTION("tcp") {
    const LaunchEnv e = detect(with(everything, {{"IBSCOPE_BOOTSTRAP", "tcp"}}), true);
    CHECK(e.kind == LaunchKind::kTcp);
    CHECK(e.rank_source == "SLURM_PROCID/SLURM_NTASKS");
    CHECK_THAT(usage_error({{"IBSCOPE_BOOTSTRAP", "tcp"}}),
               Contains("IBSCOPE_BOOTSTRAP=tcp") && Contains("IBSCOPE_RANK"));
  }
  SECTION("pmix") {
    CHECK(detect({{"IBSCOPE_BOOTSTRAP", "pmix"}}, true).kind == LaunchKind::kPmix);
    CHECK_THAT(usage_error(with(everything, {{"IBSCOPE_BOOTSTRAP", "pmix"}}), false),
               Contains("without PMIx"));
  }
  SECTION("auto and empty behave as unset") {
    CHECK(detect(with(everything, {{"IBSCOPE_BOOTSTRAP", "auto"}}), true).kind ==
          LaunchKind::kPmix);
    CHECK(detect(with(everything, {{"IBSCOPE_BOOTSTRAP", ""}}), false).kind == LaunchKind::kTcp);
  }
  SECTION("anything else is a usage error") {
    for (const char* bad : {"mpi", "TCP", "Local", " tcp", "slurm"}) {
      INFO(bad);
      CHECK_THAT(usage_error({{"IBSCOPE_BOOTSTRAP", bad}}),
                 Contains("IBSCOPE_BOOTSTRAP='" + std::string(bad) + "'") &&
                     Contains("auto, pmix, tcp or local"));
    }
  }
}

TEST_CASE("detect_launch: ranks that are not integers or out of range", "[launch_env]") {
  SECTION("not an integer") {
    // Each bad variable comes with a valid partner so that the pair is actually read.
    const struct {
      const char* name;
      const char* value;
      const char* partner;
    } cases[] = {
        {"IBSCOPE_RANK", "x", "IBSCOPE_SIZE"},
        {"IBSCOPE_RANK", "1x", "IBSCOPE_SIZE"},
        {"IBSCOPE_RANK", " 1", "IBSCOPE_SIZE"},
        {"IBSCOPE_RANK", "1.0", "IBSCOPE_SIZE"},
        {"IBSCOPE_RANK", "99999999999", "IBSCOPE_SIZE"},
        {"IBSCOPE_SIZE", "four", "IBSCOPE_RANK"},
        {"SLURM_PROCID", "zero", "SLURM_NTASKS"},
        {"SLURM_NTASKS", "4 ", "SLURM_PROCID"},
        {"OMPI_COMM_WORLD_RANK", "+1", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_SIZE", "0x10", "PMI_RANK"},
        {"IBSCOPE_ROOT_FD", "fd3", "IBSCOPE_BOOTSTRAP"},
    };
    for (const auto& c : cases) {
      INFO(c.name << "='" << c.value << "'");
      const Env env = with(kRoot, {{c.name, c.value}, {c.partner, "0"}});
      for (const bool have_pmix : {false, true}) {
        CHECK_THAT(
            usage_error(env, have_pmix),
            Contains(std::string(c.name) + "='" + c.value + "'") && Contains("not an integer"));
      }
    }
  }
  SECTION("out of range") {
    const Env cases[] = {
        {{"IBSCOPE_RANK", "4"}, {"IBSCOPE_SIZE", "4"}},
        {{"IBSCOPE_RANK", "-1"}, {"IBSCOPE_SIZE", "4"}},
        {{"IBSCOPE_RANK", "0"}, {"IBSCOPE_SIZE", "0"}},
        {{"IBSCOPE_RANK", "0"}, {"IBSCOPE_SIZE", "-3"}},
        {{"IBSCOPE_RANK", "0"}},  // no size at all
        {{"SLURM_PROCID", "8"}, {"SLURM_NTASKS", "8"}},
        {{"PMI_RANK", "2147483647"}, {"PMI_SIZE", "2"}},
    };
    for (const Env& c : cases) {
      INFO(c.begin()->first << "=" << c.begin()->second);
      for (const bool with_root : {true, false}) {
        CHECK_THAT(usage_error(with_root ? with(kRoot, c) : c), Contains("out of range"));
      }
    }
  }
}

TEST_CASE("connect_bootstrap without a launcher: single process", "[launch_env][bootstrap]") {
  const auto b = ibscope::bootstrap::connect_bootstrap(LaunchEnv{}, 5.0);
  REQUIRE(b != nullptr);
  CHECK(b->kind() == "single");
  CHECK(b->rank() == 0);
  CHECK(b->size() == 1);
  CHECK(b->local_rank() == 0);
  CHECK(b->local_size() == 1);
  CHECK(b->hosts() == std::vector<std::string>{ibscope::bootstrap::local_hostname()});
  CHECK(b->describe(0) == "rank 0 (" + ibscope::bootstrap::local_hostname() + ")");
  CHECK(b->describe(7) == "rank 7");
  CHECK(b->timeout_s() == 5.0);
  const ibscope::bootstrap::Bytes mine = {std::byte{1}, std::byte{2}};
  const auto all = b->allgather(mine, "test");
  REQUIRE(all.size() == 1);
  CHECK(all[0] == mine);
  CHECK(b->allgather({}, "empty") == std::vector<ibscope::bootstrap::Bytes>(1));
  b->barrier("test barrier");
  b->check_health();
  b->abort_job("nothing to abort");
}

TEST_CASE("connect_bootstrap: a TCP job of one rank", "[launch_env][bootstrap]") {
  ibscope::bootstrap::net::Fd listener = ibscope::bootstrap::net::listen_tcp({"127.0.0.1", 0});
  const std::uint16_t port = ibscope::bootstrap::net::bound_port(listener.get());
  const LaunchEnv env = detect({{"IBSCOPE_RANK", "0"},
                                {"IBSCOPE_SIZE", "1"},
                                {"IBSCOPE_ROOT", "127.0.0.1:" + std::to_string(port)},
                                {"IBSCOPE_TOKEN", "t0k3n"},
                                {"IBSCOPE_ROOT_FD", std::to_string(listener.release())}});
  REQUIRE(env.kind == LaunchKind::kTcp);
  const auto b = ibscope::bootstrap::connect_bootstrap(env, 3.0);
  CHECK(b->kind() == "tcp");
  CHECK(b->rank() == 0);
  CHECK(b->size() == 1);
  CHECK(b->local_size() == 1);
  const ibscope::bootstrap::Bytes mine(1000, std::byte{0x5a});
  CHECK(b->allgather(mine, "one") == std::vector<ibscope::bootstrap::Bytes>{mine});
  b->barrier("done");
}

TEST_CASE("connect_bootstrap: a bad IBSCOPE_ROOT is a usage error", "[launch_env][bootstrap]") {
  LaunchEnv env;
  env.kind = LaunchKind::kTcp;
  env.rank = 1;
  env.size = 2;
  env.root = "no-port-here";
  CHECK_THROWS_AS(ibscope::bootstrap::connect_bootstrap(env, 1.0), UsageError);
}
