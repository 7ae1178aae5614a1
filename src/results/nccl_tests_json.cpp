// nccl-tests' JSON output (`-J FILE.json`, nccl-tests 2.17 and later; results/nccl_tests.hpp)
// into the same typed runs as its text. Read from the writer, NVIDIA/nccl-tests src/util.cu
// (JSON_FILE_VERSION 1 to 3 write the same "config" and "results" fields): one run per file.

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "field_reader.hpp"
#include "ibscope/results/nccl_tests.hpp"

namespace ibscope::results {
namespace {

// The row half `key` ("out_of_place", "in_place") of result `r`, when the file has it.
void read_half(const FieldReader& in, const nlohmann::json& r, const std::string& path,
               const char* key, NcclTestsRow base, std::vector<NcclTestsRow>& rows) {
  if (!r.contains(key) || r[key].is_null()) return;  // null: only in place was run
  const nlohmann::json& h = in.at(r, path, key);
  const std::string p = FieldReader::join(path, key);
  base.in_place = std::string_view(key) == "in_place";
  base.time_us =
      h.contains("cpu_time") ? in.get<double>(h, p, "cpu_time") : in.get<double>(h, p, "time");
  base.algbw_gbps = in.get<double>(h, p, "alg_bw");
  base.busbw_gbps = in.get<double>(h, p, "bus_bw");
  if (!std::isfinite(base.time_us) || base.time_us < 0) in.fail(p, "the time is not a time");
  const double wrong = in.number_or_nan(h, p, "nwrong");  // null with -c 0
  if (!std::isnan(wrong)) {
    if (wrong < 0 || wrong > 1.8e19) in.fail(FieldReader::join(p, "nwrong"), "not a count");
    base.wrong = static_cast<std::uint64_t>(wrong);
  }
  rows.push_back(base);
}

}  // namespace

bool looks_like_nccl_tests_json(std::string_view text) {
  // Cheap: the keys nccl-tests writes and an ibscope results file does not.
  return text.find("\"nccl_version\"") != std::string_view::npos &&
         text.find("\"schema_version\"") == std::string_view::npos;
}

NcclTestsOutput parse_nccl_tests_json(std::string_view text, std::string_view source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  const FieldReader in(source);
  if (!doc.is_object()) in.fail("", "expected an object (nccl-tests' JSON output)");
  NcclTestsRun run;
  const auto args = in.get<std::vector<std::string>>(doc, "", "args");
  if (!args.empty()) {
    const std::string program = std::filesystem::path(args.front()).filename().string();
    for (const char* suffix : {"_perf_mpi", "_perf"}) {
      const auto at = program.rfind(suffix);
      if (at != std::string::npos && at + std::string_view(suffix).size() == program.size()) {
        run.collective = program.substr(0, at);
        break;
      }
    }
  }
  if (run.collective.empty()) {
    run.collective = fmt::format("{}", std::filesystem::path(std::string(source)).stem().string());
    const auto at = run.collective.find("_perf");
    run.collective = at == std::string::npos ? "" : run.collective.substr(0, at);
  }
  if (run.collective.empty()) {
    in.fail("args", "no '<collective>_perf' program in args[0] nor in the file's name");
  }
  run.program = run.collective + "_perf";
  const nlohmann::json& config = in.at(doc, "", "config");
  run.threads = in.get<int>(config, "config", "nthreads");
  run.gpus_per_thread = in.get<int>(config, "config", "ngpus");
  run.iters = in.get_or<int>(config, "config", "iterations", 0);
  run.warmup_iters = in.get_or<int>(config, "config", "warmup_iters", 0);
  if (run.threads <= 0 || run.gpus_per_thread <= 0 ||
      static_cast<long long>(run.threads) * run.gpus_per_thread > (1 << 16)) {
    in.fail("config", "nthreads and ngpus must be positive, and their product at most 65536");
  }
  // One entry per process (its first GPU): the ranks are processes x threads x GPUs.
  if (config.contains("devices")) {
    const nlohmann::json& devices = in.at(config, "config", "devices");
    if (!devices.is_array()) in.fail("config.devices", "expected an array");
    const int per_process = run.threads * run.gpus_per_thread;
    if (devices.size() > static_cast<std::size_t>((1 << 20) / per_process)) {
      in.fail("config.devices", "more ranks than ibscope reads (1,048,576)");
    }
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const std::string p = fmt::format("config.devices[{}]", i);
      const std::string host = in.get<std::string>(devices[i], p, "hostname");
      const std::string name = in.get_or<std::string>(devices[i], p, "device_info", "");
      const int first_device = in.get_or<int>(devices[i], p, "device", 0);
      for (int k = 0; k < per_process; ++k) {
        NcclTestsRank r;
        r.rank = static_cast<int>(run.ranks.size());
        r.host = host;
        r.device = first_device + k;
        r.device_name = name;
        run.ranks.push_back(std::move(r));
      }
    }
  }
  const auto& results = in.at(doc, "", "results");
  if (!results.is_array()) in.fail("results", "expected an array");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const nlohmann::json& r = results[i];
    const std::string p = fmt::format("results[{}]", i);
    NcclTestsRow base;
    base.size_bytes = in.get<std::uint64_t>(r, p, "size");
    base.count = in.get<std::uint64_t>(r, p, "count");
    base.type = in.get<std::string>(r, p, "type");
    base.redop = in.get<std::string>(r, p, "redop");
    // Written as the text column is, "%6i": a padded string.
    const std::string root = in.get<std::string>(r, p, "root");
    try {
      std::size_t used = 0;
      const auto first = root.find_first_not_of(' ');
      base.root = first == std::string::npos ? -1 : std::stoi(root.substr(first), &used);
      if (first != std::string::npos && first + used != root.size())
        throw std::invalid_argument("");
    } catch (const std::exception&) {
      in.fail(p + ".root", fmt::format("expected an integer, got '{}'", root));
    }
    base.line = static_cast<int>(i) + 1;
    read_half(in, r, p, "out_of_place", base, run.rows);
    read_half(in, r, p, "in_place", base, run.rows);
  }
  if (doc.contains("out_of_bounds") && doc["out_of_bounds"].is_object()) {
    run.out_of_bounds = in.get_or<std::uint64_t>(doc["out_of_bounds"], "out_of_bounds", "count", 0);
  }
  for (const char* key : {"average_bus_bandwidth", "average_bus_bandwidith"}) {  // v1's spelling
    if (!doc.contains(key) || !doc[key].is_object()) continue;
    for (const char* bw : {"bandwidth", "bandwidith"}) {
      if (doc[key].contains(bw) && doc[key][bw].is_number()) {
        run.avg_busbw_gbps = doc[key][bw].get<double>();
      }
    }
  }
  NcclTestsOutput out;
  out.runs.push_back(std::move(run));
  return out;
}

}  // namespace ibscope::results
