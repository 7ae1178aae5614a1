// Test fault hooks (core/fault_hooks.hpp): which variables are hooks (by prefix alone, so a hook
// added later needs no change here), what a results file records of the IBSCOPE_* variables,
// the job's hooks merged from every rank, the warning's text, and accept's verdict with a hook.

#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "accept/section.hpp"
#include "ibscope/collectives/harness/collective_sweep.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/fault_hooks.hpp"
#include "ibscope/job/crash_hook.hpp"

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

TEST_CASE("fault hooks: values parse as flags do, and a rank outside the job is refused",
          "[fault_hooks]") {
  // atoi/atof took 'abc' for rank 0 and '1:abc' for a delay of 0.
  for (const char* bad : {"abc", "", " 1", "1 ", "1x", "-1", "+1", "1.5"}) {
    INFO("'" << bad << "'");
    CHECK_THROWS_AS(collectives::parse_fault_corrupt_rank(bad), UsageError);
    CHECK_THROWS_WITH(collectives::parse_fault_corrupt_rank(bad),
                      Contains("IBSCOPE_FAULT_CORRUPT_RANK"));
  }
  CHECK(collectives::parse_fault_corrupt_rank("3") == 3);
  for (const char* bad : {"1:abc", "1", "1:", ":100", "abc:100", "1:-5", "1:nan", "1:inf",
                          "1:\t2000", "1: 2000", "1:2000us"}) {
    INFO("'" << bad << "'");
    CHECK_THROWS_AS(collectives::parse_fault_delay(bad), UsageError);
    CHECK_THROWS_WITH(collectives::parse_fault_delay(bad), Contains("IBSCOPE_FAULT_DELAY_RANK"));
  }
  const collectives::FaultDelay d = collectives::parse_fault_delay("2:1500.5");
  CHECK(d.rank == 2);
  CHECK(d.us == 1500.5);
  CHECK_THROWS_WITH(collectives::parse_fault_misplace("1:swap"), Contains("duplicate-block"));
  CHECK(collectives::parse_fault_misplace("1:drop-chunk").fault ==
        collectives::misplace::Fault::kDropChunk);
  for (const char* bad : {"1", "x:1", "1:0", "1:2:HUP", " 1:2"}) {
    INFO("'" << bad << "'");
    CHECK_THROWS_AS(job::parse_crash_hook(bad), UsageError);
    CHECK_THROWS_WITH(job::parse_crash_hook(bad), Contains("IBSCOPE_FAULT_CRASH_RANK"));
  }
  // A hook on a rank the job does not have would do nothing, silently.
  CHECK_NOTHROW(check_hook_rank("IBSCOPE_FAULT_X", "3", 3, 4));
  CHECK_THROWS_AS(check_hook_rank("IBSCOPE_FAULT_X", "4", 4, 4), UsageError);
  CHECK_THROWS_WITH(check_hook_rank("IBSCOPE_FAULT_X", "4", 4, 4),
                    Contains("IBSCOPE_FAULT_X='4': rank 4 is not a rank of this 4-rank job"));
}

TEST_CASE("fault hooks: a value with tabs, newlines and backslashes travels intact",
          "[fault_hooks]") {
  // The job's hooks cross the bootstrap as tab-separated lines: a tab in a value broke the
  // line apart ("'2000\t0-1' is not a rank range").
  for (const std::string& value :
       {std::string("1:\t2000"), std::string("a\nb"), std::string("back\\slash\\t"),
        std::string("\\"), std::string("")}) {
    const std::string escaped = escape_hook_value(value);
    CHECK(escaped.find('\t') == std::string::npos);
    CHECK(escaped.find('\n') == std::string::npos);
    CHECK(unescape_hook_value(escaped) == value);
  }
}

TEST_CASE("fault hooks: a verdict with a hook set fails, one reason per hook") {
  bool pass = true;
  std::vector<std::string> reasons{"earlier"};
  apply_fault_hooks_to_verdict({}, 4, pass, reasons);
  CHECK(pass);
  CHECK(reasons.size() == 1);
  const std::vector<FaultHook> hooks = {FaultHook{"IBSCOPE_FAULT_CORRUPT_RANK", "1", {1}},
                                        FaultHook{"IBSCOPE_FAULT_DELAY_RANK", "2:9", {2}}};
  apply_fault_hooks_to_verdict(hooks, 4, pass, reasons);
  CHECK_FALSE(pass);
  REQUIRE(reasons.size() == 3);
  CHECK(reasons[1] == fault_hook_failure(hooks[0], 4));
  CHECK(reasons[2] == fault_hook_failure(hooks[1], 4));
}
