#include "ibscope/results/watch_log.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ibscope/core/error.hpp"

namespace ibscope::results {
namespace {

// "2026-12-07T11:20:00.123Z".
std::string utc_ms(double unix_time_s) {
  const auto whole = static_cast<std::time_t>(std::floor(unix_time_s));
  const int ms = std::min(999, static_cast<int>((unix_time_s - static_cast<double>(whole)) * 1000));
  std::tm tm{};
  gmtime_r(&whole, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, ms);
}

nlohmann::json nic_json(const fabric::NicDelta& d, const fabric::NicRates& r) {
  nlohmann::json n = {{"nic", d.nic},
                      {"driver", d.driver},
                      {"bytes", r.traffic_bytes},
                      {"bytes_per_s", r.bytes_per_s},
                      {"errors", r.errors},
                      {"congestion", r.congestion},
                      {"flaps", r.flaps}};
  if (d.appeared) n["appeared"] = true;
  if (d.vanished) n["vanished"] = true;
  nlohmann::json counters = nlohmann::json::array();
  for (const auto& c : d.counters) {
    nlohmann::json j = {{"source", fabric::name_of(c.source)},
                        {"name", c.name},
                        {"kind", fabric::name_of(c.kind)},
                        {"delta", c.delta}};
    if (c.saturated) j["saturated"] = true;
    if (c.reset) j["reset"] = true;
    counters.push_back(std::move(j));
  }
  n["counters"] = std::move(counters);
  return n;
}

}  // namespace

std::string watch_log_line(const fabric::WatchInterval& interval, const std::string& host,
                           double unix_time_s, double elapsed_s) {
  nlohmann::json nics = nlohmann::json::array();
  for (std::size_t i = 0; i < interval.deltas.size() && i < interval.rates.size(); ++i) {
    nics.push_back(nic_json(interval.deltas[i], interval.rates[i]));
  }
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : interval.findings) {
    findings.push_back({{"kind", fabric::name_of(f.kind)}, {"nic", f.nic}, {"detail", f.detail}});
  }
  const nlohmann::json line = {{"host", host},
                               {"time_utc", utc_ms(unix_time_s)},
                               {"unix_time_s", unix_time_s},
                               {"elapsed_s", elapsed_s},
                               {"interval_s", interval.interval_s},
                               {"nics", std::move(nics)},
                               {"findings", std::move(findings)}};
  // Replacement of invalid UTF-8 (an interface name is bytes): a line that always parses.
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

WatchLog::WatchLog(const std::string& path, bool append) : path_(path) {
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (append ? 0 : O_EXCL);
  fd_ = bootstrap::net::Fd(::open(path.c_str(), flags, 0644));
  if (!fd_.valid()) {
    const int e = errno;
    if (e == EEXIST) {
      throw SystemError(fmt::format("cannot create the log {}", path), e,
                        "a log is never overwritten; --append adds to it");
    }
    throw SystemError(fmt::format("cannot create the log {}", path), e);
  }
}

void WatchLog::write(const std::string& line) {
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_.get(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw SystemError(fmt::format("cannot write the log {}", path_), errno);
    done += static_cast<std::size_t>(n);
  }
}

std::vector<WatchLogLine> load_watch_log(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("{}: cannot read the watch log", path));
  std::vector<WatchLogLine> lines;
  std::size_t number = 0;
  for (std::string text; std::getline(in, text);) {
    ++number;
    if (text.empty()) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(text);
      WatchLogLine line;
      line.host = j.at("host").get<std::string>();
      line.unix_time_s = j.at("unix_time_s").get<double>();
      line.interval_s = j.at("interval_s").get<double>();
      for (const auto& n : j.at("nics")) {
        line.nics.push_back({n.at("nic").get<std::string>(), n.at("driver").get<std::string>(),
                             n.at("bytes_per_s").get<double>(), n.at("errors").get<std::uint64_t>(),
                             n.at("congestion").get<std::uint64_t>(),
                             n.at("flaps").get<std::uint64_t>()});
      }
      for (const auto& f : j.at("findings")) {
        line.findings.push_back({f.at("kind").get<std::string>(), f.at("nic").get<std::string>(),
                                 f.at("detail").get<std::string>()});
      }
      lines.push_back(std::move(line));
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(
          fmt::format("{}:{}: not a line of an ibscope watch log: {}", path, number, e.what()));
    }
  }
  if (lines.empty()) throw UsageError(fmt::format("{}: an empty watch log", path));
  return lines;
}

}  // namespace ibscope::results
