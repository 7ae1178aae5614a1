// The history's questions as SQL, built from the filters that were given so that each one can
// use its index (an "x = ? OR ? = ''" form would not).

#include "ibscope/history/queries.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

namespace ibscope::history {
namespace {

using Param = std::variant<std::string, std::int64_t>;

struct Where {
  std::vector<std::string> clauses;
  std::vector<Param> params;

  /// `clause` with a plain "?" per value of `values`, in order: SQLite numbers plain
  /// parameters left to right, so clauses joined in order bind in order.
  void add(std::string clause, std::vector<Param> values) {
    clauses.push_back(std::move(clause));
    params.insert(params.end(), values.begin(), values.end());
  }
  std::string sql() const {
    return clauses.empty() ? std::string("1") : fmt::format("{}", fmt::join(clauses, " AND "));
  }
  void bind(Statement& s) const {
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      if (const auto* text = std::get_if<std::string>(&params[i])) {
        s.bind(index, *text);
      } else {
        s.bind(index, std::get<std::int64_t>(params[i]));
      }
    }
  }
};

std::string nic_prefix(const std::string& nic) { return nic + ":"; }
std::string nic_prefix_end(const std::string& nic) { return nic + ";"; }  // ':' + 1

/// A NIC column matching "mlx5_2" (the device, any port: "mlx5_2", "mlx5_2:1") or "mlx5_2:1"
/// (that port, or the device where only the topology named it).
void add_nic(Where& w, const std::string& column, const std::string& nic) {
  if (const auto colon = nic.find(':'); colon != std::string::npos) {
    w.add(fmt::format("({0} = ? OR {0} = ?)", column), {nic, nic.substr(0, colon)});
    return;
  }
  w.add(fmt::format("({0} = ? OR ({0} >= ? AND {0} < ?))", column),
        {nic, nic_prefix(nic), nic_prefix_end(nic)});
}

/// "2026-12-01" or "2026-12-01T10:00:00Z"; until a date means to its end.
std::string checked_time(const std::string& text, bool until) {
  const bool date = text.size() == 10 && text[4] == '-' && text[7] == '-';
  const bool stamp = text.size() >= 11 && text[4] == '-' && text[7] == '-' && text[10] == 'T';
  if (!date && !stamp) {
    throw UsageError(
        fmt::format("{}: {} takes a UTC date YYYY-MM-DD or a time YYYY-MM-DDTHH:MM:SSZ", text,
                    until ? "--until" : "--since"));
  }
  return date && until ? text + "T99" : text;  // 'T99' sorts after every time of that day
}

void add_run_filters(Where& w, const RunFilter& f, const char* run, bool with_rows) {
  if (!f.host.empty()) {
    w.add(fmt::format("{} IN (SELECT run FROM hosts WHERE host = ?)", run), {f.host});
  }
  if (!f.nic.empty()) {
    Where inner;
    add_nic(inner, "n.nic", f.nic);
    // EXISTS over the run's own NICs (the primary key's prefix): an IN over the NIC index with
    // its OR of names measured 70 times slower (docs/history.md).
    w.add(fmt::format("EXISTS (SELECT 1 FROM nics n WHERE n.run = {} AND {})", run, inner.sql()),
          inner.params);
  }
  if (with_rows && !f.collective.empty()) {
    if (f.size_bytes) {
      w.add(fmt::format("{} IN (SELECT run FROM rows WHERE name = ? AND size_bytes = ?)", run),
            {f.collective, static_cast<std::int64_t>(*f.size_bytes)});
    } else {
      w.add(fmt::format("{} IN (SELECT run FROM rows WHERE name = ?)", run), {f.collective});
    }
  }
  const std::string started = "r.started_utc";  // every query joins its runs as r
  if (!f.since_utc.empty()) w.add(started + " >= ?", {checked_time(f.since_utc, false)});
  if (!f.until_utc.empty()) w.add(started + " <= ?", {checked_time(f.until_utc, true)});
}

std::string limit_sql(int limit) { return limit > 0 ? fmt::format(" LIMIT {}", limit) : ""; }

void add_end(Where& w, const char* side, const std::string& host, const std::string& nic) {
  w.add(fmt::format("l.host_{} = ?", side), {host});
  if (!nic.empty()) add_nic(w, fmt::format("l.nic_{}", side), nic);
}

}  // namespace

std::vector<RunRecord> find_runs(Database& db, const RunFilter& filter) {
  Where w;
  add_run_filters(w, filter, "r.id", true);
  Statement s = db.prepare(fmt::format(
      "SELECT r.id, r.path, r.run_id, r.tool, r.subcommand, r.command, r.started_utc, r.hosts, "
      "r.hardware, r.host_count, r.ranks, r.complete, r.accept_pass, "
      "(SELECT count(*) FROM rows WHERE run = r.id), (SELECT count(*) FROM links WHERE run = "
      "r.id) FROM runs r WHERE {} ORDER BY r.started_utc DESC, r.run_id DESC{}",
      w.sql(), limit_sql(filter.limit)));
  w.bind(s);
  std::vector<RunRecord> out;
  while (s.step()) {
    RunRecord r;
    r.id = s.column_int(0);
    r.path = s.column_text(1);
    r.run_id = s.column_text(2);
    r.tool = s.column_text(3);
    r.subcommand = s.column_text(4);
    r.command = s.column_text(5);
    r.started_utc = s.column_text(6);
    r.hosts = s.column_text(7);
    r.hardware = s.column_text(8);
    r.host_count = static_cast<int>(s.column_int(9));
    r.ranks = static_cast<int>(s.column_int(10));
    r.complete = s.column_int(11) != 0;
    if (!s.column_is_null(12)) r.accept_pass = s.column_int(12) != 0;
    r.rows = static_cast<int>(s.column_int(13));
    r.links = static_cast<int>(s.column_int(14));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> known_hosts(Database& db) {
  Statement s = db.prepare(
      "SELECT host FROM hosts UNION SELECT host_a FROM links UNION SELECT host_b FROM links "
      "ORDER BY 1");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.column_text(0));
  return out;
}

LinkSpec parse_link_spec(const std::string& text, const std::vector<std::string>& hosts) {
  auto end_of = [&](std::string_view e, std::string& host, std::string& nic) {
    const auto colon = e.find(':');
    host = std::string(e.substr(0, colon));
    nic = colon == std::string_view::npos ? std::string() : std::string(e.substr(colon + 1));
    if (host.empty()) {
      throw UsageError(
          fmt::format("--link {}: a link is HOST, HOST:NIC, HOST-HOST or HOST:NIC-HOST:NIC", text));
    }
  };
  auto known = [&](const std::string& h) {
    return std::find(hosts.begin(), hosts.end(), h) != hosts.end();
  };
  LinkSpec spec;
  for (const std::string sep : {"<->", ","}) {
    if (const auto at = text.find(sep); at != std::string::npos) {
      end_of(std::string_view(text).substr(0, at), spec.host_a, spec.nic_a);
      end_of(std::string_view(text).substr(at + sep.size()), spec.host_b, spec.nic_b);
      return spec;
    }
  }
  // '-': the split whose two ends are known hosts; else the whole text when it is one; else
  // the first '-'.
  std::optional<std::size_t> first;
  for (std::size_t at = text.find('-'); at != std::string::npos; at = text.find('-', at + 1)) {
    LinkSpec s;
    if (at == 0 || at + 1 == text.size()) continue;
    end_of(std::string_view(text).substr(0, at), s.host_a, s.nic_a);
    end_of(std::string_view(text).substr(at + 1), s.host_b, s.nic_b);
    if (known(s.host_a) && known(s.host_b)) return s;
    if (!first) first = at;
  }
  end_of(text, spec.host_a, spec.nic_a);
  if (known(spec.host_a) || !first) return spec;
  end_of(std::string_view(text).substr(0, *first), spec.host_a, spec.nic_a);
  end_of(std::string_view(text).substr(*first + 1), spec.host_b, spec.nic_b);
  return spec;
}

std::vector<LinkRecord> link_history(Database& db, const LinkSpec& link, const RunFilter& filter) {
  // Either direction: (a, b) as given, or the link recorded the other way round.
  Where forward, backward;
  add_end(forward, "a", link.host_a, link.nic_a);
  add_end(backward, "b", link.host_a, link.nic_a);
  if (!link.host_b.empty()) {
    add_end(forward, "b", link.host_b, link.nic_b);
    add_end(backward, "a", link.host_b, link.nic_b);
  }
  Where w;
  std::vector<Param> params = forward.params;
  params.insert(params.end(), backward.params.begin(), backward.params.end());
  w.add(fmt::format("(({}) OR ({}))", forward.sql(), backward.sql()), params);
  add_run_filters(w, filter, "l.run", true);
  Statement s = db.prepare(fmt::format(
      "SELECT r.started_utc, r.run_id, l.host_a, l.nic_a, l.host_b, l.nic_b, l.measured_gbps, "
      "l.expected_gbps, l.latency_us, l.pass, l.verdict, l.counters FROM links l JOIN runs r "
      "ON r.id = l.run WHERE {} ORDER BY r.started_utc DESC, r.run_id DESC, l.rowid DESC{}",
      w.sql(), limit_sql(filter.limit)));
  w.bind(s);
  std::vector<LinkRecord> out;
  while (s.step()) {
    LinkRecord l;
    l.started_utc = s.column_text(0);
    l.run_id = s.column_text(1);
    l.host_a = s.column_text(2);
    l.nic_a = s.column_text(3);
    l.host_b = s.column_text(4);
    l.nic_b = s.column_text(5);
    l.measured_gbps = s.column_double(6);
    l.expected_gbps = s.column_double(7);
    l.latency_us = s.column_double(8);
    l.pass = s.column_int(9) != 0;
    l.verdict = s.column_text(10);
    l.counters = s.column_text(11);
    out.push_back(std::move(l));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<RowRecord> row_history(Database& db, const RunFilter& filter) {
  Where w;
  w.add("x.name = ?", {filter.collective});
  if (filter.size_bytes) {
    w.add("x.size_bytes = ?", {static_cast<std::int64_t>(*filter.size_bytes)});
  }
  add_run_filters(w, filter, "x.run", false);
  Statement s = db.prepare(fmt::format(
      "SELECT r.started_utc, r.run_id, x.kind, x.name, x.algorithm, x.type, x.size_bytes, "
      "x.ranks, x.host_a, x.host_b, x.time_us, x.median_us, x.spread_pct, x.algbw_gbps, "
      "x.busbw_gbps, x.busbw_median_gbps, x.in_place FROM rows x JOIN runs r ON r.id = x.run WHERE "
      "{} "
      "ORDER BY r.started_utc DESC, r.run_id DESC, x.size_bytes DESC, x.rowid DESC{}",
      w.sql(), limit_sql(filter.limit)));
  w.bind(s);
  std::vector<RowRecord> out;
  while (s.step()) {
    RowRecord r;
    r.started_utc = s.column_text(0);
    r.run_id = s.column_text(1);
    r.kind = s.column_text(2);
    r.name = s.column_text(3);
    r.algorithm = s.column_text(4);
    r.type = s.column_text(5);
    r.size_bytes = static_cast<std::uint64_t>(s.column_int(6));
    r.ranks = static_cast<int>(s.column_int(7));
    if (!s.column_is_null(8)) r.hosts = s.column_text(8) + "-" + s.column_text(9);
    r.time_us = s.column_double(10);
    r.median_us = s.column_double(11);
    r.spread_pct = s.column_double(12);
    r.algbw_gbps = s.column_double(13);
    r.busbw_gbps = s.column_double(14);
    r.busbw_median_gbps = s.column_double(15);
    r.in_place = s.column_int(16) != 0;
    out.push_back(std::move(r));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace ibscope::history
