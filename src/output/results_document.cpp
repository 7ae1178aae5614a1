#include "ibscope/output/results_document.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>

#include "ibscope/bootstrap/local_launcher.hpp"
#include "ibscope/build_info.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/output/csv.hpp"
#include "ibscope/output/topology_table.hpp"

namespace ibscope {

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json to_json(const Stats& s) {
  return {{"n", s.n},         {"min", s.min}, {"p50", s.p50},   {"p99", s.p99},
          {"p99_9", s.p99_9}, {"max", s.max}, {"mean", s.mean}, {"sd", s.sd}};
}

nlohmann::json to_json(const CollectiveRow& r) {
  nlohmann::json j = {{"collective", r.collective},
                      {"algorithm", r.algorithm},
                      {"type", r.type},
                      {"op", r.op},
                      {"in_place", r.in_place},
                      {"size_bytes", r.size_bytes},
                      {"count", r.count},
                      {"ranks", r.ranks},
                      {"time_us", to_json(r.time_us)},
                      {"algbw_gbps", r.algbw_gbps},
                      {"busbw_gbps", r.busbw_gbps},
                      {"wrong", r.wrong ? nlohmann::json(*r.wrong) : nlohmann::json(nullptr)},
                      {"samples_us", r.samples_us}};
  if (!r.selected_by.empty()) j["selected_by"] = r.selected_by;
  if (r.root >= 0) j["root"] = r.root;
  if (r.mem != "host" || r.mem_path != "host") {  // absent: host memory, as before issue 8
    j["mem"] = r.mem;
    j["mem_path"] = r.mem_path;
  }
  if (!r.stalls.empty()) j["stalls"] = to_json(r.stalls);
  return j;
}

nlohmann::json to_json(const std::vector<Stall>& stalls) {
  nlohmann::json out = nlohmann::json::array();
  for (const Stall& s : stalls) {
    out.push_back({{"iteration", s.iteration}, {"time_us", s.time_us}, {"median_us", s.median_us}});
  }
  return out;
}

nlohmann::json to_json(const P2pRow& r) {
  nlohmann::json j = {{"test", r.test},
                      {"rank_a", r.rank_a},
                      {"rank_b", r.rank_b},
                      {"host_a", r.host_a},
                      {"host_b", r.host_b},
                      {"size_bytes", r.size_bytes},
                      {"window", r.window},
                      {"time_us", to_json(r.time_us)},
                      {"bw_gbps", r.bw_gbps},
                      {"peak_bw_gbps", r.peak_bw_gbps},
                      {"msg_rate_mps", r.msg_rate_mps},
                      {"transports", r.transports},
                      {"samples_us", r.samples_us}};
  if (!r.stalls.empty()) j["stalls"] = to_json(r.stalls);
  if (r.mem != "host" || r.mem_path != "host") {
    j["mem"] = r.mem;
    j["mem_path"] = r.mem_path;
  }
  return j;
}

nlohmann::json to_json(const ProbeRow& r) {
  nlohmann::json j = {{"test", r.test},
                      {"rank_a", r.rank_a},
                      {"rank_b", r.rank_b},
                      {"host_a", r.host_a},
                      {"host_b", r.host_b},
                      {"device_a", r.device_a},
                      {"device_b", r.device_b},
                      {"bidirectional", r.bidirectional},
                      {"size_bytes", r.size_bytes},
                      {"iterations", r.iterations},
                      {"qps", r.qps},
                      {"tx_depth", r.tx_depth},
                      {"mtu_bytes", r.mtu_bytes},
                      {"inline_bytes", r.inline_bytes},
                      {"gid_index_a", r.gid_index_a},
                      {"gid_index_b", r.gid_index_b},
                      {"line_rate_gbit", r.line_rate_gbit},
                      {"time_us", to_json(r.time_us)},
                      {"bw_gbps", r.bw_gbps},
                      {"bw_gbit", r.bw_gbps * 8},
                      {"peak_bw_gbps", r.peak_bw_gbps},
                      {"msg_rate_mps", r.msg_rate_mps},
                      {"samples_us", r.samples_us}};
  return j;
}

ResultsDocument::ResultsDocument(std::string subcommand, std::vector<std::string> argv)
    : subcommand_(std::move(subcommand)) {
  doc_["schema_version"] = kResultsSchemaVersion;
  doc_["tool"] = {{"name", "ibscope"},
                  {"version", build::kVersion},
                  {"git_sha", build::kGitSha},
                  {"build_type", build::kBuildType}};
  doc_["command"] = {{"subcommand", subcommand_}, {"argv", std::move(argv)}};
  doc_["started_utc"] = utc_now_iso8601();
  doc_["finished_utc"] = nullptr;
  doc_["complete"] = true;
  doc_["error"] = nullptr;
  doc_["job"] = nlohmann::json::object();
  doc_["environment"] = nlohmann::json::object();
  doc_["warnings"] = nlohmann::json::array();
  doc_["collectives"] = {{"params", nlohmann::json::object()}, {"rows", nlohmann::json::array()}};
  doc_["p2p"] = {{"params", nlohmann::json::object()}, {"rows", nlohmann::json::array()}};
}

void ResultsDocument::add_warning(const std::string& w) { doc_["warnings"].push_back(w); }

void ResultsDocument::set_params(const std::string& section, nlohmann::json params) {
  doc_[section]["params"] = std::move(params);
  if (!doc_[section].contains("rows")) doc_[section]["rows"] = nlohmann::json::array();
}

void ResultsDocument::add_row(const CollectiveRow& row) {
  doc_["collectives"]["rows"].push_back(to_json(row));
}

void ResultsDocument::add_row(const P2pRow& row) { doc_["p2p"]["rows"].push_back(to_json(row)); }

void ResultsDocument::add_row(const ProbeRow& row) {
  if (!doc_.contains("probes")) {
    doc_["probes"] = {{"params", nlohmann::json::object()}, {"rows", nlohmann::json::array()}};
  }
  doc_["probes"]["rows"].push_back(to_json(row));
}

void ResultsDocument::set_error(const std::string& kind, const std::string& message) {
  doc_["complete"] = false;
  doc_["error"] = {{"kind", kind}, {"message", message}};
}

void write_file_exclusive(const std::filesystem::path& path, const std::string& content) {
  const std::filesystem::path tmp =
      path.parent_path() / fmt::format(".{}.tmp.{}", path.filename().string(), ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw SystemError(fmt::format("cannot create {}", tmp.string()), errno);
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw SystemError(fmt::format("cannot write {}", tmp.string()), e);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot flush {}", tmp.string()), e);
  }
  // link() fails with EEXIST instead of replacing: an existing result is never overwritten.
  if (::link(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot create {}", path.string()), e);
  }
  ::unlink(tmp.c_str());
}

void write_file_replacing(const std::filesystem::path& path, const std::string& content) {
  // The temp name starts with a dot: node-exporter's textfile collector reads *.prom only.
  const std::filesystem::path tmp =
      path.parent_path() / fmt::format(".{}.new.{}.{}", path.filename().string(), ::getpid(),
                                       make_job_token().substr(0, 6));
  write_file_exclusive(tmp, content);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot replace {}", path.string()), e);
  }
}

std::filesystem::path ResultsDocument::write(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw SystemError(fmt::format("cannot create results folder {}", dir.string()), ec.value());
  doc_["finished_utc"] = utc_now_iso8601();
  std::string stamp = doc_["started_utc"].get<std::string>();
  std::erase(stamp, '-');
  std::erase(stamp, ':');
  const std::string content = doc_.dump(1) + "\n";
  for (int attempt = 0;; ++attempt) {
    const auto path = dir / fmt::format("ibscope-{}-{}-{}.json", subcommand_, stamp,
                                        make_job_token().substr(0, 6));
    try {
      write_file_exclusive(path, content);
      return path;
    } catch (const SystemError& e) {
      if (e.errno_value() != EEXIST || attempt >= 3) throw;
    }
  }
}

std::string ResultsDocument::csv() const {
  std::string csv;
  const auto& coll = doc_["collectives"]["rows"];
  if (!coll.empty()) {
    csv +=
        "section,collective,algorithm,type,op,in_place,size_bytes,count,ranks,time_us_mean,"
        "time_us_p50,time_us_p99,time_us_min,time_us_max,algbw_gbps,busbw_gbps,wrong\n";
    for (const auto& r : coll) {
      csv += fmt::format(
          "collectives,{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},"
          "{:.4f},{:.4f},{}\n",
          csv_field(r["collective"].get<std::string>()),
          csv_field(r["algorithm"].get<std::string>()), csv_field(r["type"].get<std::string>()),
          csv_field(r["op"].get<std::string>()), r["in_place"].get<bool>() ? 1 : 0,
          r["size_bytes"].get<std::uint64_t>(), r["count"].get<std::uint64_t>(),
          r["ranks"].get<int>(), r["time_us"]["mean"].get<double>(),
          r["time_us"]["p50"].get<double>(), r["time_us"]["p99"].get<double>(),
          r["time_us"]["min"].get<double>(), r["time_us"]["max"].get<double>(),
          r["algbw_gbps"].get<double>(), r["busbw_gbps"].get<double>(),
          r["wrong"].is_null() ? std::string("") : r["wrong"].dump());
    }
  }
  const auto& p2p = doc_["p2p"]["rows"];
  if (!p2p.empty()) {
    csv +=
        "section,test,rank_a,rank_b,host_a,host_b,size_bytes,window,time_us_mean,time_us_p50,"
        "time_us_p99,time_us_min,time_us_max,bw_gbps,peak_bw_gbps,msg_rate_mps\n";
    for (const auto& r : p2p) {
      csv += fmt::format(
          "p2p,{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},{:.4f},"
          "{:.4f}\n",
          csv_field(r["test"].get<std::string>()), r["rank_a"].get<int>(), r["rank_b"].get<int>(),
          csv_field(r["host_a"].get<std::string>()), csv_field(r["host_b"].get<std::string>()),
          r["size_bytes"].get<std::uint64_t>(), r["window"].get<int>(),
          r["time_us"]["mean"].get<double>(), r["time_us"]["p50"].get<double>(),
          r["time_us"]["p99"].get<double>(), r["time_us"]["min"].get<double>(),
          r["time_us"]["max"].get<double>(), r["bw_gbps"].get<double>(),
          r["peak_bw_gbps"].get<double>(), r["msg_rate_mps"].get<double>());
    }
  }
  if (doc_.contains("probes") && !doc_["probes"]["rows"].empty()) {
    csv +=
        "section,test,rank_a,rank_b,host_a,host_b,device_a,device_b,bidirectional,size_bytes,"
        "iterations,qps,mtu_bytes,time_us_p50,time_us_p99,time_us_p99_9,time_us_min,"
        "time_us_max,bw_gbps,bw_gbit,peak_bw_gbps,msg_rate_mps,line_rate_gbit\n";
    for (const auto& r : doc_["probes"]["rows"]) {
      const auto& t = r["time_us"];
      csv += fmt::format(
          "probes,{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},"
          "{:.4f},{:.4f},{:.4f},{:.2f}\n",
          csv_field(r["test"].get<std::string>()), r["rank_a"].get<int>(), r["rank_b"].get<int>(),
          csv_field(r["host_a"].get<std::string>()), csv_field(r["host_b"].get<std::string>()),
          csv_field(r["device_a"].get<std::string>()), csv_field(r["device_b"].get<std::string>()),
          r["bidirectional"].get<bool>() ? 1 : 0, r["size_bytes"].get<std::uint64_t>(),
          r["iterations"].get<int>(), r["qps"].get<int>(), r["mtu_bytes"].get<std::uint32_t>(),
          t["p50"].get<double>(), t["p99"].get<double>(), t.value("p99_9", 0.0),
          t["min"].get<double>(), t["max"].get<double>(), r["bw_gbps"].get<double>(),
          r["bw_gbit"].get<double>(), r["peak_bw_gbps"].get<double>(),
          r["msg_rate_mps"].get<double>(), r["line_rate_gbit"].get<double>());
    }
  }
  if (doc_.contains("topology")) csv += topology_csv(doc_["topology"]);
  return csv;
}

std::filesystem::path ResultsDocument::write_csv(const std::filesystem::path& json_path) const {
  auto path = json_path;
  path.replace_extension(".csv");
  write_file_exclusive(path, csv());
  return path;
}

}  // namespace ibscope
