// What of a results document goes into the history: the run (who, when, where, on what
// hardware), its hosts and NICs, accept's links and every collective, p2p and probe row with
// its median, spread and bandwidths. Medians and spreads come from the rows' samples where the
// file kept them (model/run_compare.hpp's robust spread), so a query never reopens a file.

#include "ibscope/history/indexer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/core/datatype.hpp"
#include "ibscope/model/run_compare.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::history {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError(fmt::format("{}: cannot read the file", file.string()));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw UsageError(fmt::format("{}: read error", file.string()));
  return std::move(s).str();
}

fs::path absolute_path(const fs::path& file) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(file, ec);
  return ec ? fs::absolute(file) : p;
}

/// "mlx5" of "mlx5_2:1", "rxe" of "rxe0:1": the driver family, the NIC's model as far as the
/// file tells.
std::string nic_family(std::string_view nic) {
  nic = nic.substr(0, nic.find(':'));
  if (const auto u = nic.rfind('_'); u != std::string_view::npos)
    return std::string(nic.substr(0, u));
  while (!nic.empty() && nic.back() >= '0' && nic.back() <= '9') nic.remove_suffix(1);
  return std::string(nic);
}

struct NicInfo {
  double rate_gbit = 0;
  std::string link_layer;
};

struct Hardware {
  std::map<std::pair<std::string, std::string>, NicInfo> nics;  // (host, nic) -> port
  std::string gpu;
};

std::string host_of_rank(const results::Document& doc, int rank) {
  const auto& h = doc.job.hosts;
  return rank >= 0 && static_cast<std::size_t>(rank) < h.size() ? h[static_cast<std::size_t>(rank)]
                                                                : std::string();
}

/// A NIC named by rails and links ("mlx5_2:1") once, unless the topology named its device.
void add_named_nic(Hardware& hw, const std::string& host, const std::string& nic) {
  if (nic.empty()) return;
  if (hw.nics.count({host, nic.substr(0, nic.find(':'))}) > 0) return;
  hw.nics.try_emplace({host, nic});
}

Hardware hardware_of(const results::Document& doc) {
  Hardware hw;
  if (doc.topology) {
    for (const auto& host : *doc.topology) {
      for (const auto& nic : host.nics) {
        NicInfo info;
        for (const auto& port : nic.ports) {
          if (port.data_rate_gbit_s > info.rate_gbit) {
            info.rate_gbit = port.data_rate_gbit_s;
            info.link_layer = port.link_layer;
          }
        }
        hw.nics[{host.host, nic.name}] = info;
      }
      if (hw.gpu.empty() && !host.gpus.empty()) hw.gpu = host.gpus.front().name;
    }
  }
  if (doc.environment.verbs_ports) {
    for (const auto& p : *doc.environment.verbs_ports) {
      hw.nics[{host_of_rank(doc, p.rank), p.device}] = {p.data_rate_gbit, p.link_layer};
      if (hw.gpu.empty()) hw.gpu = p.gpu_name;
    }
  }
  if (doc.environment.rails) {
    for (const auto& r : *doc.environment.rails) add_named_nic(hw, r.host, r.nic);
  }
  if (doc.acceptance) {
    for (const auto& l : doc.acceptance->links) {
      add_named_nic(hw, l.host_a, l.nic_a);
      add_named_nic(hw, l.host_b, l.nic_b);
    }
  }
  return hw;
}

void bind_optional(Statement& s, int index, double value) {
  if (value > 0) {
    s.bind(index, value);
  } else {
    s.bind_null(index);
  }
}

std::int64_t insert_run(Database& db, const fs::path& file, std::string_view hash,
                        const results::Document& doc, const Hardware& hw,
                        const std::map<std::string, int>& hosts) {
  std::string nic_model, link_layer;
  double rate = 0;
  for (const auto& [key, info] : hw.nics) {
    if (nic_model.empty()) nic_model = nic_family(key.second);
    if (info.rate_gbit > rate) {
      rate = info.rate_gbit;
      link_layer = info.link_layer;
    }
  }
  std::string hardware = nic_model.empty() ? std::string("-") : nic_model;
  if (rate > 0) hardware += fmt::format(" {:g} Gb/s", rate);
  if (!link_layer.empty()) hardware += " " + link_layer;
  if (!hw.gpu.empty()) hardware += ", GPU " + hw.gpu;
  std::vector<std::string> names;
  for (const auto& h : doc.job.hosts) {
    if (std::find(names.begin(), names.end(), h) == names.end()) names.push_back(h);
  }
  Statement s = db.prepare(
      "INSERT INTO runs (path, content_hash, run_id, tool, tool_version, subcommand, command, "
      "started_utc, finished_utc, complete, error_kind, hosts, host_count, ranks, nic_model, "
      "nic_rate_gbit, gpu, hardware, accept_pass, indexed_utc) VALUES "
      "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
      "?20)");
  s.bind(1, file.string()).bind(2, hash).bind(3, file.stem().string()).bind(4, doc.tool.name);
  s.bind(5, doc.tool.version).bind(6, doc.command.subcommand);
  s.bind(7, fmt::format("{}", fmt::join(doc.command.argv, " "))).bind(8, doc.started_utc);
  if (doc.finished_utc) {
    s.bind(9, *doc.finished_utc);
  } else {
    s.bind_null(9);
  }
  s.bind(10, doc.complete ? 1 : 0);
  if (doc.error) {
    s.bind(11, doc.error->kind);
  } else {
    s.bind_null(11);
  }
  s.bind(12, fmt::format("{}", fmt::join(names, ","))).bind(13, static_cast<int>(hosts.size()));
  s.bind(14, doc.job.ranks);
  if (nic_model.empty()) {
    s.bind_null(15);
  } else {
    s.bind(15, nic_model);
  }
  bind_optional(s, 16, rate);
  if (hw.gpu.empty()) {
    s.bind_null(17);
  } else {
    s.bind(17, hw.gpu);
  }
  s.bind(18, hardware);
  if (doc.acceptance) {
    s.bind(19, doc.acceptance->pass ? 1 : 0);
  } else {
    s.bind_null(19);
  }
  s.bind(20, results::utc_now_iso8601());
  s.run();
  return db.last_insert_id();
}

void insert_hosts_and_nics(Database& db, std::int64_t run, const Hardware& hw,
                           const std::map<std::string, int>& hosts) {
  Statement h = db.prepare("INSERT INTO hosts (run, host, ranks) VALUES (?1, ?2, ?3)");
  for (const auto& [host, ranks] : hosts) h.bind(1, run).bind(2, host).bind(3, ranks).run();
  Statement n = db.prepare(
      "INSERT OR IGNORE INTO nics (run, host, nic, rate_gbit, link_layer) VALUES (?1, ?2, ?3, "
      "?4, ?5)");
  for (const auto& [key, info] : hw.nics) {
    n.bind(1, run).bind(2, key.first).bind(3, key.second);
    bind_optional(n, 4, info.rate_gbit);
    if (info.link_layer.empty()) {
      n.bind_null(5);
    } else {
      n.bind(5, info.link_layer);
    }
    n.run();
  }
}

void insert_links(Database& db, std::int64_t run, const results::Acceptance& a) {
  Statement s = db.prepare(
      "INSERT INTO links (run, host_a, nic_a, host_b, nic_b, measured_gbps, expected_gbps, "
      "latency_us, pass, verdict, counters) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
      "?11)");
  for (const auto& l : a.links) {
    s.bind(1, run).bind(2, l.host_a).bind(3, l.nic_a).bind(4, l.host_b).bind(5, l.nic_b);
    s.bind(6, l.measured_gbps);
    bind_optional(s, 7, l.expected_gbps);
    bind_optional(s, 8, l.latency_us);
    s.bind(9, l.pass ? 1 : 0).bind(10, l.pass ? std::string("pass") : "FAIL: " + l.reason);
    if (l.counters.empty()) {
      s.bind_null(11);
    } else {
      s.bind(11, l.counters);
    }
    s.run();
  }
}

struct RowValues {
  std::string kind, name, algorithm, type;
  bool in_place = false;
  std::uint64_t size_bytes = 0;
  int ranks = 0;
  std::string host_a = {}, host_b = {};
  double time_us = 0, median_us = 0, spread = 0, algbw_gbps = 0, busbw_gbps = 0,
         busbw_median_gbps = 0;
  std::optional<std::uint64_t> wrong = std::nullopt;
};

void insert_row(Statement& s, std::int64_t run, const RowValues& r) {
  s.bind(1, run).bind(2, r.kind).bind(3, r.name).bind(4, r.algorithm).bind(5, r.type);
  s.bind(6, static_cast<std::int64_t>(r.size_bytes)).bind(7, r.ranks).bind(17, r.in_place ? 1 : 0);
  if (r.host_a.empty()) {
    s.bind_null(8).bind_null(9);
  } else {
    s.bind(8, r.host_a).bind(9, r.host_b);
  }
  bind_optional(s, 10, r.time_us);
  bind_optional(s, 11, r.median_us);
  s.bind(12, 100 * r.spread);
  bind_optional(s, 13, r.algbw_gbps);
  bind_optional(s, 14, r.busbw_gbps);
  bind_optional(s, 15, r.busbw_median_gbps);
  if (r.wrong) {
    s.bind(16, static_cast<std::int64_t>(*r.wrong));
  } else {
    s.bind_null(16);
  }
  s.run();
}

void insert_rows(Database& db, std::int64_t run, const results::Document& doc) {
  Statement s = db.prepare(
      "INSERT INTO rows (run, kind, name, algorithm, type, size_bytes, ranks, host_a, host_b, "
      "time_us, median_us, spread_pct, algbw_gbps, busbw_gbps, busbw_median_gbps, wrong, "
      "in_place) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
      "?17)");
  for (const auto& c : doc.collectives.rows) {
    RowValues r{"collective", std::string(name_of(c.collective)),
                c.algorithm,  std::string(name_of(c.type)),
                c.in_place,   c.size_bytes,
                c.ranks};
    r.time_us = c.time_us;
    r.median_us = c.iteration_us.n > 0 ? c.iteration_us.p50 : c.time_us;
    r.spread = model::relative_spread(c.samples_us);
    r.algbw_gbps = c.algbw_gbps;
    r.busbw_gbps = c.busbw_gbps;
    // busbw at the median call: the file's busbw is at nccl-tests' time (the loop's mean).
    r.busbw_median_gbps = r.median_us > 0 ? c.busbw_gbps * c.time_us / r.median_us : 0;
    r.wrong = c.wrong;
    insert_row(s, run, r);
  }
  for (const auto& p : doc.p2p.rows) {
    RowValues r{"p2p", p.test, "", p.mem, false, p.size_bytes, 2, p.host_a, p.host_b};
    r.time_us = p.time_us.mean;
    r.median_us = p.time_us.p50;
    r.spread = model::relative_spread(p.samples_us);
    r.algbw_gbps = p.bw_gbps;
    insert_row(s, run, r);
  }
  if (doc.probes) {
    for (const auto& p : doc.probes->rows) {
      RowValues r{"probe",
                  p.test,
                  p.device_a + (p.device_b.empty() ? "" : "-" + p.device_b),
                  p.bidirectional ? "bidir" : "unidir",
                  false,
                  p.size_bytes,
                  2,
                  p.host_a,
                  p.host_b};
      r.time_us = p.time_us.mean;
      r.median_us = p.time_us.p50;
      r.spread = model::relative_spread(p.samples_us);
      r.algbw_gbps = p.bw_gbps;
      insert_row(s, run, r);
    }
  }
}

std::optional<std::int64_t> run_with_hash(Database& db, std::string_view hash) {
  Statement s = db.prepare("SELECT id FROM runs WHERE content_hash = ?1");
  s.bind(1, hash);
  if (!s.step()) return std::nullopt;
  return s.column_int(0);
}

/// Already indexed: the run keeps its rows; only a new location is recorded.
IndexResult already_indexed(Database& db, std::int64_t id, const fs::path& file) {
  Statement s = db.prepare("UPDATE runs SET path = ?1, run_id = ?2 WHERE id = ?3 AND path <> ?1");
  s.bind(1, file.string()).bind(2, file.stem().string()).bind(3, id).run();
  return {file, file.stem().string(), false};
}

bool indexable(const fs::path& p) {
  const auto ext = p.extension().string();
  return ext == ".json" || ext == ".txt" || ext == ".log";
}

}  // namespace

std::string content_hash(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

IndexResult index_document(Database& db, const fs::path& file, std::string_view text,
                           const results::Document& doc) {
  const fs::path abs = absolute_path(file);
  const std::string hash = content_hash(text);
  Transaction t(db);
  if (const auto id = run_with_hash(db, hash)) {
    IndexResult r = already_indexed(db, *id, abs);
    t.commit();
    return r;
  }
  std::map<std::string, int> hosts;
  for (const auto& h : doc.job.hosts) ++hosts[h];
  const Hardware hw = hardware_of(doc);
  const std::int64_t run = insert_run(db, abs, hash, doc, hw, hosts);
  insert_hosts_and_nics(db, run, hw, hosts);
  if (doc.acceptance) insert_links(db, run, *doc.acceptance);
  insert_rows(db, run, doc);
  t.commit();
  return {abs, abs.stem().string(), true};
}

IndexResult index_file(Database& db, const fs::path& file) {
  const std::string text = read_bytes(file);
  if (const auto id = run_with_hash(db, content_hash(text))) {
    Transaction t(db);
    IndexResult r = already_indexed(db, *id, absolute_path(file));
    t.commit();
    return r;
  }
  return index_document(db, file, text, results::load(file));
}

IndexReport index_paths(Database& db, const std::vector<fs::path>& paths) {
  IndexReport report;
  auto one = [&](const fs::path& file) {
    try {
      (index_file(db, file).added ? report.added : report.already) += 1;
    } catch (const HistoryError&) {
      throw;
    } catch (const Error& e) {
      report.skipped.push_back(e.what());
    }
  };
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && indexable(it->path())) files.push_back(it->path());
      }
      if (ec) report.skipped.push_back(fmt::format("{}: {}", path.string(), ec.message()));
      std::sort(files.begin(), files.end());
      for (const auto& f : files) one(f);
    } else if (fs::exists(path, ec)) {
      one(path);
    } else {
      report.skipped.push_back(fmt::format("{}: no such file or folder", path.string()));
    }
  }
  return report;
}

void clear(Database& db) {
  Transaction t(db);
  db.exec(
      "DELETE FROM rows; DELETE FROM links; DELETE FROM nics; DELETE FROM hosts; "
      "DELETE FROM runs;");
  t.commit();
}

}  // namespace ibscope::history
