// `ibscope probe loopback` and accept's loopback flags on this machine (no RDMA device, no GPU):
// bad values and missing devices are one clear line and the right exit status. The loopback
// itself runs on real verbs in tests/rxe/test_loopback_rxe.cpp.

#include <catch2/catch.hpp>
#include <string>

#include "process.hpp"

using ibscope::test::run_cli;

TEST_CASE("probe loopback: no RDMA device, no GPU and bad values are clear errors",
          "[cli][loopback]") {
  SECTION("no RDMA device on the host") {
    const auto r = run_cli({"probe", "loopback", "--timeout", "30"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("no host of the job has an RDMA device with an ACTIVE port") !=
          std::string::npos);
  }
  SECTION("GPU memory on a host without a GPU") {
    const auto r = run_cli({"probe", "loopback", "--mem", "cuda", "--timeout", "30"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("loopback into GPU memory") != std::string::npos);
    CHECK(r.err.find("has no GPU") != std::string::npos);
  }
  SECTION("a budget beyond the timeout") {
    const auto r = run_cli({"probe", "loopback", "--loopback-budget", "90s", "--timeout", "60"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--loopback-budget 90 s: must be below --timeout (60 s)") !=
          std::string::npos);
  }
  SECTION("accept: a slow percentage out of range") {
    const auto r = run_cli({"accept", "--np", "2", "--loopback-slow-pct", "100"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--loopback-slow-pct 100: must be in (0, 100)") != std::string::npos);
  }
  SECTION("a malformed slow-NIC hook") {
    ibscope::test::ProcessSpec spec;
    spec.args = {"probe", "loopback", "--timeout", "30"};
    spec.env = {{"IBSCOPE_FAULT_SLOW_NIC", "rxe0:abc"}};
    const auto r = ibscope::test::run_process(spec);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("IBSCOPE_FAULT_SLOW_NIC='rxe0:abc': expected <device>:<microseconds>") !=
          std::string::npos);
  }
}
