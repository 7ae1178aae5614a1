// Test fault hooks (core/fault_hooks.hpp): which variables are hooks (by prefix alone, so a hook
// added later needs no change here), what a results file records of the IBSCOPE_* variables,
// the job's hooks merged from every rank, the warning's text, and accept's verdict with a hook.

#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "accept/section.hpp"
#include "ibscope/core/fault_hooks.hpp"

using namespace ibscope;
using Catch::Matchers::Contains;

TEST_CASE("fault hooks: any IBSCOPE_FAULT_* or IBSCOPE_SOAK_INJECT_* variable, by prefix",
          "[fault_hooks]") {
  CHECK(is_fault_hook("IBSCOPE_FAULT_DELAY_RANK"));
  CHECK(is_fault_hook("IBSCOPE_FAULT_CORRUPT_RANK"));
  CHECK(is_fault_hook("IBSCOPE_SOAK_INJECT_LEAK_BYTES_PER_S"));
  CHECK(is_fault_hook("IBSCOPE_FAULT_MISPLACE"));  // one added later: covered by its name
  CHECK_FALSE(is_fault_hook("IBSCOPE_FAULT"));     // the prefix ends with '_'
  CHECK_FALSE(is_fault_hook("IBSCOPE_TOKEN"));
  CHECK_FALSE(is_fault_hook("IBSCOPE_HOSTNAME"));
  CHECK_FALSE(is_fault_hook("UCX_FAULT_X"));
  CHECK_FALSE(is_fault_hook("ibscope_fault_delay_rank"));
}

TEST_CASE("fault hooks: variables from an environment block, hooks among them", "[fault_hooks]") {
  const std::vector<std::string_view> block = {
      "PATH=/usr/bin",
      "IBSCOPE_FAULT_DELAY_RANK=2:4000",
      "IBSCOPE_HOSTNAME=emu0",
      "IBSCOPE_SOAK_INJECT_LEAK_BYTES_PER_S=",  // set, empty: still a hook
      "IBSCOPE_FAULT_MISPLACE",                 // no '=': value ""
      "IBSCOPE_TOKEN=s3cret=x",                 // the value is everything after the first '='
      "UCX_TLS=tcp",
  };
  const EnvVars ibscope = env_with_prefix(block, "IBSCOPE_");
  CHECK(ibscope == EnvVars{{"IBSCOPE_FAULT_DELAY_RANK", "2:4000"},
                           {"IBSCOPE_HOSTNAME", "emu0"},
                           {"IBSCOPE_SOAK_INJECT_LEAK_BYTES_PER_S", ""},
                           {"IBSCOPE_FAULT_MISPLACE", ""},
                           {"IBSCOPE_TOKEN", "s3cret=x"}});
  CHECK(env_with_prefix(block, "UCX_") == EnvVars{{"UCX_TLS", "tcp"}});
  CHECK(fault_hooks_in(ibscope) == EnvVars{{"IBSCOPE_FAULT_DELAY_RANK", "2:4000"},
                                           {"IBSCOPE_SOAK_INJECT_LEAK_BYTES_PER_S", ""},
                                           {"IBSCOPE_FAULT_MISPLACE", ""}});
  // The job token never reaches a results file; its presence does.
  const EnvVars recorded = recorded_ibscope_env(ibscope);
  CHECK(recorded.at("IBSCOPE_TOKEN") == kRedactedValue);
  CHECK(recorded.at("IBSCOPE_FAULT_DELAY_RANK") == "2:4000");
  CHECK(recorded.size() == ibscope.size());
}

TEST_CASE("fault hooks: merged from every rank, by name and value", "[fault_hooks]") {
  const std::vector<EnvVars> per_rank = {
      {{"IBSCOPE_FAULT_DELAY_RANK", "2:4000"}},
      {{"IBSCOPE_FAULT_DELAY_RANK", "2:4000"}, {"IBSCOPE_FAULT_CORRUPT_RANK", "1"}},
      {{"IBSCOPE_FAULT_DELAY_RANK", "2:9"}, {"IBSCOPE_HOSTNAME", "not a hook"}},
      {},
  };
  const auto hooks = merge_fault_hooks(per_rank);
  REQUIRE(hooks.size() == 3);
  CHECK(hooks[0] == FaultHook{"IBSCOPE_FAULT_CORRUPT_RANK", "1", {1}});
  CHECK(hooks[1] == FaultHook{"IBSCOPE_FAULT_DELAY_RANK", "2:4000", {0, 1}});
  CHECK(hooks[2] == FaultHook{"IBSCOPE_FAULT_DELAY_RANK", "2:9", {2}});
  CHECK(describe_fault_hook(hooks[0], 4) == "IBSCOPE_FAULT_CORRUPT_RANK=1 (rank 1)");
  CHECK(describe_fault_hook(hooks[1], 4) == "IBSCOPE_FAULT_DELAY_RANK=2:4000 (ranks 0, 1)");
  CHECK(describe_fault_hook(hooks[1], 2) == "IBSCOPE_FAULT_DELAY_RANK=2:4000 (every rank)");
  CHECK(merge_fault_hooks(std::vector<EnvVars>(3)).empty());
}

TEST_CASE("fault hooks: the warning names the hook and cannot be mistaken", "[fault_hooks]") {
  const FaultHook h{"IBSCOPE_FAULT_DELAY_RANK", "2:4000", {0, 1, 2, 3}};
  const std::string w = fault_hook_warning(h, 4);
  CHECK_THAT(w,
             Catch::StartsWith("FAULT HOOK IBSCOPE_FAULT_DELAY_RANK=2:4000 (every rank) is set"));
  CHECK_THAT(w, Contains("not genuine"));
  CHECK_THAT(w, Contains("accept and soak cannot pass"));
  CHECK_THAT(w, Contains("docs/fault-hooks.md"));
  CHECK(fault_hook_failure(h, 4) ==
        "fault hook IBSCOPE_FAULT_DELAY_RANK=2:4000 (every rank) is set: a run with a test hook "
        "never passes (unset it)");
}

TEST_CASE("fault hooks: accept's verdict fails with a hook set, naming it",
          "[fault_hooks][accept]") {
  accept::AcceptOptions options;
  const accept::Preflight preflight{};
  const accept::LinkSet links{};
  const accept::AcceptReport report{};
  const std::vector<std::string> hosts = {"h0", "h1"};
  const accept::SectionInputs clean{options,   accept::AcceptTransport::kUcx,
                                    preflight, links,
                                    report,    0,
                                    hosts,     std::nullopt,
                                    nullptr,   0};
  REQUIRE(accept::build_section(clean).pass);  // nothing measured, nothing failed

  options.fault_hooks = {FaultHook{"IBSCOPE_FAULT_MISPLACE", "1", {1}}};
  const accept::SectionInputs hooked{options,   accept::AcceptTransport::kUcx,
                                     preflight, links,
                                     report,    0,
                                     hosts,     std::nullopt,
                                     nullptr,   0};
  const accept::AcceptResult r = accept::build_section(hooked);
  CHECK_FALSE(r.pass);
  CHECK_FALSE(r.section.pass);
  CHECK(r.section.fault_hooks == std::vector<std::string>{"IBSCOPE_FAULT_MISPLACE=1 (rank 1)"});
  REQUIRE_FALSE(r.failures.empty());
  CHECK(r.failures.back() ==
        "fault hook IBSCOPE_FAULT_MISPLACE=1 (rank 1) is set: a run with a test hook never "
        "passes (unset it)");
}
