// Real launchers: Open MPI's mpirun starts the ranks, ibscope finds them through PMIx.

#include <unistd.h>

#include <catch2/catch.hpp>

#include "ibscope/build_info.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

TEST_CASE("mpirun starts ibscope, which bootstraps through PMIx", "[mp][launcher][mpirun]") {
  if (::access("/usr/bin/mpirun", X_OK) != 0 || !ibscope::build::kHavePmix) {
    WARN("mpirun or PMIx not available: skipped");
    return;
  }
  const std::string out = make_temp_dir();
  const auto r = run_process({{"--allow-run-as-root", "--oversubscribe", "-np", "3",
                               "--bind-to", "none", ibscope_binary(), "allreduce", "--sizes",
                               "4,4K,1M", "-n", "2", "--timeout", "30", "--out", out},
                              {{"OMPI_MCA_plm_rsh_agent", ""}},
                              120,
                              "/usr/bin/mpirun"});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  const auto doc = load_run_results(r);
  CHECK(doc["job"]["bootstrap"] == "pmix");
  CHECK(doc["job"]["ranks"] == 3);
  for (const auto& row : doc["collectives"]["rows"]) CHECK(row["wrong"].get<int>() == 0);
}
