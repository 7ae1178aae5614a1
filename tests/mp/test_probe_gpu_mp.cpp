// `ibscope probe --mem` on this kind of host (no GPU, or no CUDA build, or no RDMA device):
// a GPU buffer request fails at once with one clear line and exit status 1 or 2, never a hang;
// bad --mem values are usage errors before any rank starts.

#include <catch2/catch.hpp>
#include <sstream>

#include "ibscope/gpu/cuda.hpp"
#include "results_json.hpp"

using namespace ibscope::test;

namespace {

// The lines of stderr that carry the error (the launcher prefixes rank output).
std::vector<std::string> error_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.find("error") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST_CASE("probe --mem cuda without a usable GPU fails fast with one clear line",
          "[mp][probe][gpu]") {
  for (const char* mem : {"cuda", "host,cuda"}) {
    const std::string out = make_temp_dir();
    const auto r = run_process(
        {{"probe", "write_bw", "--np", "2", "-n", "10", "--mem", mem, "--out", out}, {}, 60});
    INFO(describe(r));
    CHECK_FALSE(r.timed_out);
    CHECK((r.exit_code == 1 || r.exit_code == 2));
    CHECK(r.elapsed_s < 30);
    // Which precondition fails first depends on the build and the host; each says what to do.
    const bool named = r.err.find("built without CUDA") != std::string::npos ||
                       r.err.find("no GPU found on") != std::string::npos ||
                       r.err.find("no RDMA device") != std::string::npos ||
                       r.err.find("cannot register GPU memory") != std::string::npos ||
                       r.err.find("no CUDA-capable device") != std::string::npos;
    CHECK(named);
    if (!ibscope::gpu::built_with_cuda()) {
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(std::string("--mem ") + mem) &&
                            Catch::Contains("-DIBSCOPE_CUDA=ON"));
    }
    // Every rank that reports the failure does it in one line.
    for (const auto& line : error_lines(r.err)) CHECK(line.size() < 600);
    CHECK_FALSE(error_lines(r.err).empty());
  }
}

TEST_CASE("probe --mem usage errors stop before any rank starts", "[mp][probe][gpu]") {
  const std::string out = make_temp_dir();
  std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"probe", "write_bw", "--mem", "gpu"}, "valid: host, cuda"},
      {{"probe", "write_bw", "--mem", "host,cuda,host"}, "initiator,responder"},
      {{"probe", "write_bw", "--mem", "host,"}, "valid: host, cuda"},
  };
  cases.push_back(ibscope::gpu::built_with_cuda()
                      ? std::pair<std::vector<std::string>, std::string>{{"probe", "write_lat",
                                                                          "--mem", "cuda"},
                                                                         "send_lat or read_lat"}
                      : std::pair<std::vector<std::string>, std::string>{
                            {"probe", "write_lat", "--mem", "cuda"}, "built without CUDA"});
  for (const auto& [args, message] : cases) {
    auto full = args;
    full.insert(full.end(), {"--np", "2", "--out", out});
    const auto r = run_process({full, {}, 60});
    INFO(describe(r));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
  }
}

TEST_CASE("probe --help documents --mem", "[mp][probe][gpu]") {
  const auto r = run_process({{"probe", "--help"}, {}, 30});
  INFO(describe(r));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("--mem") && Catch::Contains("host,cuda") &&
                        Catch::Contains("dma-buf"));
}
