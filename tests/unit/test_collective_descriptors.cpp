// The collectives' descriptors (collectives/descriptor.hpp) are complete and agree with the
// results schema and nccl-tests; every algorithm declares the capabilities the harness, the
// model and the fits ask for (collectives/collective.hpp), instead of being known by name.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "ibscope/collectives/collective.hpp"
#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/collectives/harness/call_layout.hpp"
#include "ibscope/collectives/harness/tuning.hpp"
#include "ibscope/model/fit_export.hpp"
#include "ibscope/results/schema.hpp"

using namespace ibscope;

namespace {

// The "enum" of the collective rows' "collective" property, wherever the schema nests it.
void collect_collective_enums(const nlohmann::json& j, std::vector<std::vector<std::string>>& out) {
  if (j.is_object()) {
    if (j.contains("collective") && j["collective"].is_object() &&
        j["collective"].contains("enum")) {
      out.push_back(j["collective"]["enum"].get<std::vector<std::string>>());
    }
    for (const auto& [key, value] : j.items()) collect_collective_enums(value, out);
  } else if (j.is_array()) {
    for (const auto& value : j) collect_collective_enums(value, out);
  }
}

}  // namespace

TEST_CASE("one descriptor per collective, complete and in the enum's order", "[descriptor]") {
  const auto all = collectives::descriptors();
  REQUIRE(all.size() == 6);  // kAllreduce .. kAlltoallv
  std::set<std::string> command_names;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& d = all[i];
    INFO(d.name);
    CHECK(static_cast<std::size_t>(d.id) == i);
    CHECK(&collectives::descriptor_of(d.id) == &d);
    CHECK_FALSE(d.name.empty());
    CHECK_FALSE(d.prose.empty());
    CHECK_FALSE(d.summary.empty());
    REQUIRE_FALSE(d.help_examples.empty());
    CHECK(d.help_examples.back() == '\n');
    CHECK(d.busbw_factor != nullptr);
    CHECK(d.lay_out != nullptr);
    CHECK(d.fill_input != nullptr);
    CHECK(d.count_wrong != nullptr);
    CHECK(command_names.insert(std::string(d.name)).second);
    for (auto alias : d.aliases) CHECK(command_names.insert(std::string(alias)).second);
    CHECK(name_of(d.id) == d.name);
    CHECK(collective_named(d.name) == d.id);
    CHECK(reduces(d.id) == d.reduces);
    CHECK_FALSE(collectives::algorithms_for(d.id).empty());
  }
  CHECK(collective_named("alltoall") == Collective::kAlltoall);
  CHECK_FALSE(collective_named("all_to_all"));  // an alias names the command only
  CHECK(collectives::collective_names(" or ") ==
        "allreduce, reduce_scatter, allgather, broadcast, alltoall or alltoallv");
  CHECK(collectives::collective_names(", ") ==
        "allreduce, reduce_scatter, allgather, broadcast, alltoall, alltoallv");
}

TEST_CASE("the results schema's enum of collectives is the descriptors' names", "[descriptor]") {
  const auto schema = nlohmann::json::parse(results::schema_text());
  std::vector<std::vector<std::string>> enums;
  collect_collective_enums(schema, enums);
  REQUIRE(enums.size() == 1);
  std::vector<std::string> names;
  for (const auto& d : collectives::descriptors()) names.emplace_back(d.name);
  CHECK(enums.front() == names);
}

TEST_CASE("busbw factors are nccl-tests' (REFERENCE.md)", "[descriptor][busbw]") {
  for (int p : {1, 2, 3, 4, 7, 8, 64, 1000}) {
    INFO("p = " << p);
    const double share = p > 1 ? static_cast<double>(p - 1) / p : 0;
    CHECK(busbw_factor(Collective::kAllreduce, p) == Approx(2 * share));
    CHECK(busbw_factor(Collective::kReduceScatter, p) == Approx(share));
    CHECK(busbw_factor(Collective::kAllgather, p) == Approx(share));
    CHECK(busbw_factor(Collective::kBroadcast, p) == (p > 1 ? 1.0 : 0.0));
    CHECK(busbw_factor(Collective::kAlltoall, p) == Approx(share));
  }
  // All-to-all moves count / p elements to each rank: nccl-tests rounds the count down to a
  // multiple of p, and so does the row's size.
  CHECK(collectives::call_count(Collective::kAlltoall, 1001, 4) == 1000);
  CHECK(collectives::call_count(Collective::kAlltoall, 3, 4) == 0);
  CHECK(collectives::call_count(Collective::kAlltoall, 7, 1) == 7);
  CHECK(collectives::call_count(Collective::kAllgather, 1001, 4) == 1001);
  CHECK_FALSE(collectives::descriptor_of(Collective::kAlltoall).reduces);
  CHECK_FALSE(collectives::descriptor_of(Collective::kAlltoall).has_root);
  CHECK(collectives::descriptor_of(Collective::kBroadcast).has_root);
  CHECK_FALSE(collectives::descriptor_of(Collective::kAllgather).has_root);
  CHECK(collectives::descriptor_of(Collective::kReduceScatter).nccl_name == "reducescatter");
  CHECK(model::nccl_collective("broadcast") == "broadcast");
  CHECK_FALSE(model::nccl_collective("alltoall"));
}

TEST_CASE("algorithms declare consistent capabilities", "[descriptor][registry][capabilities]") {
  const collectives::LinkCost intra{1e-6, 1e-10, 1e-11}, inter{5e-6, 1e-9, 1e-11};
  for (const auto& d : collectives::descriptors()) {
    bool arena_seen = false;
    for (const auto& a : collectives::algorithms_for(d.id)) {
      INFO(d.name << " " << a.name);
      const auto& caps = a.caps;
      CHECK(collectives::algorithm_named(d.id, a.name) == &a);
      CHECK(collectives::needs_arena(d.id, a.name) == caps.needs_intra_host_arena);
      // The arena is host memory: an algorithm that needs it says so, and why.
      if (caps.needs_intra_host_arena) CHECK_FALSE(caps.host_memory_only.empty());
      if (caps.needs_intra_host_arena && !arena_seen) {
        CHECK(collectives::arena_algorithm(d.id) == a.name);
        arena_seen = true;
      }
      if (caps.two_tier_cost_s) {
        // Its tiers are fitted from the rows of a registered one-tier algorithm.
        REQUIRE_FALSE(caps.tiers_fitted_by.empty());
        const auto* fitted = collectives::algorithm_named(d.id, caps.tiers_fitted_by);
        REQUIRE(fitted != nullptr);
        CHECK_FALSE(fitted->caps.two_tier_cost_s);
        // With one rank per host only the inter-host tier is left: the one-tier formula.
        for (int hosts : {2, 4, 16}) {
          CHECK(caps.two_tier_cost_s(intra, inter, 1 << 20, 1, hosts) ==
                Approx(a.cost_s(inter, 1 << 20, hosts)));
          CHECK(caps.two_tier_cost_s(intra, inter, 0, 1, 1) == 0);
        }
      } else {
        CHECK(caps.tiers_fitted_by.empty());
      }
    }
    if (!arena_seen) CHECK(collectives::arena_algorithm(d.id).empty());
  }
  CHECK_FALSE(collectives::needs_arena(Collective::kAllreduce, "auto"));
  CHECK(collectives::algorithm_named(Collective::kAllreduce, "nope") == nullptr);
}

TEST_CASE("hier declares the arena, host memory, two tiers and the ring's fits",
          "[descriptor][registry][capabilities]") {
  const auto& hier = collectives::find_algorithm(Collective::kAllreduce, "hier");
  CHECK(hier.caps.needs_intra_host_arena);
  CHECK(hier.caps.host_memory_only ==
        "-A hier reads local peers' buffers in place: host memory on the host path only "
        "(--mem host, --mem-path host); GPU buffers keep -A ring, tree or dbt");
  CHECK(hier.caps.two_tier_cost_s);
  CHECK(hier.caps.tiers_fitted_by == "ring");
  CHECK(hier.caps.nccl_name.empty());
  CHECK(collectives::arena_algorithm(Collective::kAllreduce) == "hier");
  for (const char* flat : {"ring", "rd", "rhd", "tree", "dbt"}) {
    INFO(flat);
    const auto& a = collectives::find_algorithm(Collective::kAllreduce, flat);
    CHECK_FALSE(a.caps.needs_intra_host_arena);
    CHECK(a.caps.host_memory_only.empty());
    CHECK_FALSE(a.caps.two_tier_cost_s);
  }
  // NCCL's names, declared per algorithm.
  CHECK(collectives::find_algorithm(Collective::kAllreduce, "ring").caps.nccl_name == "ring");
  CHECK(collectives::find_algorithm(Collective::kAllreduce, "dbt").caps.nccl_name == "tree");
  CHECK(collectives::find_algorithm(Collective::kAllreduce, "rd").caps.nccl_name.empty());
  CHECK(collectives::find_algorithm(Collective::kBroadcast, "ring").caps.nccl_name == "ring");
  CHECK(model::nccl_algorithm("tree") == "tree");
  CHECK_FALSE(model::nccl_algorithm("hier"));
}

TEST_CASE(
    "all-to-all and all-to-all-v: pairwise first, hier through the arena priced on scattered's "
    "fits",
    "[descriptor][registry][capabilities]") {
  // All-to-all-v's formulas are all-to-all's at the mean size (the uniform counts).
  for (Collective c : {Collective::kAlltoall, Collective::kAlltoallv}) {
    INFO(name_of(c));
    const auto all = collectives::algorithms_for(c);
    REQUIRE(all.size() == 3);
    CHECK(all[0].name == "pairwise");
    CHECK(all[1].name == "scattered");
    CHECK(collectives::default_algorithm(c, 8, 1 << 20) == "pairwise");
    const auto& hier = collectives::find_algorithm(c, "hier");
    CHECK(hier.caps.needs_intra_host_arena);
    CHECK(hier.caps.tiers_fitted_by == "scattered");
    CHECK_THAT(std::string(hier.caps.host_memory_only),
               Catch::EndsWith("GPU buffers keep -A pairwise or scattered"));
    CHECK(collectives::arena_algorithm(c) == "hier");
    // -A auto's default rule: hier with several ranks on one host (all-to-all, 4 local ranks,
    // 2 cores: hier 1.0x scattered at 1 KiB, 3.6x at 64 KiB, 2.4x at 1 MiB), pairwise
    // otherwise.
    CHECK(collectives::default_rule_picks_hier(c, 4, 1, 1024));
    CHECK_FALSE(collectives::default_rule_picks_hier(c, 4, 4, 1024));
    // One message of n/H per other host on the rail, and (L-1)/L n read from local peers.
    const collectives::LinkCost intra{1e-6, 1e-10, 0}, inter{5e-6, 1e-9, 0};
    const double n = 1 << 20;
    CHECK(hier.caps.two_tier_cost_s(intra, inter, n, 4, 1) == Approx(2e-6 + 0.75 * n * 1e-10));
    CHECK(hier.caps.two_tier_cost_s(intra, inter, n, 4, 2) ==
          Approx(2e-6 + 0.75 * n * 1e-10 + 5e-6 + 0.5 * n * 1e-9));
    // Pairwise pays one latency per peer, scattered one per window of 32.
    CHECK(all[0].cost_s(inter, n, 65) == Approx(64 * (5e-6 + n / 65 * 1e-9)));
    CHECK(all[1].cost_s(inter, n, 65) == Approx(2 * 5e-6 + 64.0 / 65 * n * 1e-9));
  }
}
