// GPU buffers on a machine without a GPU: the staged path with host memory standing in (real
// UCX traffic between real ranks, every message through bounce buffers in several fragments,
// copies deferred until polled) verifies every algorithm and labels its rows; --mem cuda fails
// at once with one clear line; per-side memory needs --pairs first.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../common/sanitized.hpp"
#include "ibscope/gpu/cuda.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

TEST_CASE("staged all-reduce through bounce buffers verifies and is labelled", "[mp][gpu]") {
  const std::string dir = make_temp_dir();
  // 4 KiB fragments: messages up to 256 KiB move in up to 64 fragments, 4 in flight.
  // Under the sanitizers one type (tests/common/sanitized.hpp): the fragments are the point.
  const std::string types = unless_sanitized("float,half", "float");
  const auto r = run_process({{"allreduce", "--np",      "3",          "-A",      "all",
                               "-d",        types,       "-o",         "sum,max", "-b",
                               "8",         "-e",        "256K",       "-n",      "2",
                               "-w",        "1",         "--mem-path", "staged",  "--stage-chunk",
                               "4K",        "--timeout", "60",         "--out",   dir},
                              {},
                              300});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("staged (asked)") != std::string::npos);
  const nlohmann::json doc = load_run_results(r);
  const auto& rows = doc.at("collectives").at("rows");
  const std::size_t n_types = kSanitizedBuild ? 1 : 2;
  REQUIRE(rows.size() == 5 * n_types * 2 * 16 * 2);  // algorithms x types x ops x sizes x placement
  for (const auto& row : rows) {
    INFO(row.at("algorithm") << " " << row.at("size_bytes"));
    CHECK(row.at("wrong") == 0);
    CHECK(row.at("mem") == "host");
    CHECK(row.at("mem_path") == "staged");
  }
  CHECK(doc.at("collectives").at("params").at("mem_path") == "staged");
}

TEST_CASE("staged reduce_scatter, allgather, broadcast verify", "[mp][gpu]") {
  for (const char* c : {"reduce_scatter", "allgather", "broadcast"}) {
    const std::string dir = make_temp_dir();
    const auto r = run_process({{c, "--np", "3", "-b", "8", "-e", "128K", "-n", "2", "-w", "1",
                                 "--mem-path", "staged", "--stage-chunk", "4K", "--out", dir},
                                {},
                                180});
    INFO(c << "\n" << describe(r));
    REQUIRE(r.exit_code == 0);
    const nlohmann::json doc = load_run_results(r);  // kept: the loop refers into it
    for (const auto& row : doc.at("collectives").at("rows")) {
      CHECK(row.at("wrong") == 0);
      CHECK(row.at("mem_path") == "staged");
    }
  }
}

TEST_CASE("staged p2p: messages larger than a fragment, every test", "[mp][gpu]") {
  const std::string dir = make_temp_dir();
  const auto r = run_process(
      {{"p2p", "--np",       "2",  "-b",       "1", "-e",         "1M",     "-n",
        "20",  "--bw-iters", "3",  "--window", "8", "--mem-path", "staged", "--stage-chunk",
        "64K", "--timeout",  "60", "--out",    dir},
       {},
       180});
  INFO(describe(r));
  REQUIRE(r.exit_code == 0);
  int rows = 0;
  const nlohmann::json doc = load_run_results(r);  // kept: the loop refers into it
  for (const auto& row : doc.at("p2p").at("rows")) {
    ++rows;
    CHECK(row.at("mem_path") == "staged");
    CHECK(row.at("time_us").at("p50").get<double>() > 0);
  }
  CHECK(rows == 21 * 3);  // 1 B .. 1 MiB x latency, bw, bibw
}

TEST_CASE("GPU buffers without a usable GPU fail at once, in one clear line", "[mp][gpu]") {
  const std::string dir = make_temp_dir();
  for (const char* cmd : {"allreduce", "p2p"}) {
    const auto r = run_process(
        {{cmd, "--np", "2", "-b", "8", "-e", "1K", "--mem", "cuda", "--out", dir}, {}, 60});
    INFO(describe(r));
    CHECK_FALSE(r.timed_out);
    CHECK(r.elapsed_s < 30);
    if (ibscope::gpu::built_with_cuda()) {
      // A CUDA build on a host without GPU or driver: the CUDA call and its error, exit 1.
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("cuda") != std::string::npos);
    } else {
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("built without CUDA") != std::string::npos);
    }
  }
}

TEST_CASE("memory flags: bad values and per-side rules are usage errors", "[mp][gpu]") {
  const std::string dir = make_temp_dir();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"allreduce", "--np", "2", "--mem", "gpu"}, "expected host or cuda"},
      {{"allreduce", "--np", "2", "--mem-path", "bounce"}, "auto, direct or staged"},
      {{"allreduce", "--np", "2", "--stage-chunk", "1K"}, "--stage-chunk"},
      {{"p2p", "--np", "2", "--mem", "host,cuda,host"}, "one kind, or two"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--out", dir});
    const auto r = run_process({args, {}, 60});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
  }
  if (ibscope::gpu::built_with_cuda()) {
    const auto r = run_process({{"p2p", "--np", "2", "--mem", "host,cuda", "--out", dir}, {}, 60});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--pairs first") != std::string::npos);
  }
}
