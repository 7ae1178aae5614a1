#include "document_json.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "field_reader.hpp"
#include "ibscope/collectives/descriptor.hpp"
#include "ibscope/results/collective_columns.hpp"
#include "ibscope/results/rank_samples.hpp"
#include "loopback_json.hpp"
#include "nic_counters_json.hpp"
#include "section_json.hpp"
#include "topology_json.hpp"
#include "tuning_json.hpp"

namespace ibscope::results {
namespace {

using nlohmann::json;

json or_null(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

// ---- rows ----

json to_json(const std::vector<measure::Stall>& stalls) {
  json out = json::array();
  for (const measure::Stall& s : stalls) {
    out.push_back({{"iteration", s.iteration}, {"time_us", s.time_us}, {"median_us", s.median_us}});
  }
  return out;
}

std::vector<measure::Stall> read_stalls(const FieldReader& in, const json& row,
                                        const std::string& path) {
  std::vector<measure::Stall> out;
  if (!row.contains("stalls")) return out;
  const json& a = row["stalls"];
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = fmt::format("{}.stalls[{}]", path, i);
    out.push_back(measure::Stall{.iteration = in.get<int>(a[i], p, "iteration"),
                                 .time_us = in.get<double>(a[i], p, "time_us"),
                                 .median_us = in.get<double>(a[i], p, "median_us")});
  }
  return out;
}

void put_mem(json& j, std::string_view mem, std::string_view mem_path) {
  if (mem != "host" || mem_path != "host") {  // absent: host memory, as before issue 8
    j["mem"] = mem;
    j["mem_path"] = mem_path;
  }
}

// The enumerator of `all` whose name_of() is the field's string; a value the schema let through
// but this build does not know names the path.
template <typename E>
E named(const FieldReader& in, const json& j, const std::string& p, const char* key,
        std::initializer_list<E> all) {
  const auto text = in.get<std::string>(j, p, key);
  for (E e : all) {
    if (name_of(e) == text) return e;
  }
  in.fail(FieldReader::join(p, key), fmt::format("unknown value \"{}\"", text));
}

template <typename E>
E named_or(const FieldReader& in, const json& j, const std::string& p, const char* key,
           std::initializer_list<E> all, E fallback) {
  return j.is_object() && j.contains(key) ? named(in, j, p, key, all) : fallback;
}

json to_json(const Cell& c) {
  return std::visit(
      [](const auto& v) -> json {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
          return nullptr;
        } else {
          return v;
        }
      },
      c);
}

Cell read_cell(const FieldReader& in, const json& j, const std::string& p,
               const CollectiveColumn& col) {
  const std::string key(col.key);
  if (col.nullable && in.at(j, p, key.c_str()).is_null()) return std::monostate{};
  switch (col.kind) {
    case CellKind::kText:
      return in.get<std::string>(j, p, key.c_str());
    case CellKind::kBool:
      return in.get<bool>(j, p, key.c_str());
    case CellKind::kInt:
      return in.get<std::int64_t>(j, p, key.c_str());
    case CellKind::kUint:
      return in.get<std::uint64_t>(j, p, key.c_str());
    case CellKind::kReal:
      return in.get<double>(j, p, key.c_str());
  }
  return std::monostate{};
}

measure::CollectiveRow read_collective_row(const FieldReader& in, const json& j,
                                           const std::string& p) {
  measure::CollectiveRow r;
  for (const CollectiveColumn& col : collective_columns()) {
    if (!col.in_json) continue;
    if (col.omitted != nullptr && !(j.is_object() && j.contains(col.key))) continue;
    const Cell cell = read_cell(in, j, p, col);
    if (!col.set(r, cell)) {
      in.fail(FieldReader::join(p, std::string(col.key).c_str()),
              fmt::format("unknown value \"{}\"", std::get<std::string>(cell)));
    }
  }
  r.mem = named_or(in, j, p, "mem", {memory::MemKind::kHost, memory::MemKind::kCuda},
                   memory::MemKind::kHost);
  r.mem_path =
      named_or(in, j, p, "mem_path",
               {memory::MemPath::kHost, memory::MemPath::kDirect, memory::MemPath::kStaged},
               memory::MemPath::kHost);
  r.iteration_us =
      read_stats(in, in.at(j, p, "iteration_us"), FieldReader::join(p, "iteration_us"));
  r.samples_us = in.get<std::vector<double>>(j, p, "samples_us");
  r.stalls = read_stalls(in, j, p);
  r.nic_counters = read_nic_counters(in, j, p);
  return r;
}

measure::P2pRow read_p2p_row(const FieldReader& in, const json& j, const std::string& p) {
  measure::P2pRow r;
  r.test = in.get<std::string>(j, p, "test");
  r.rank_a = in.get<int>(j, p, "rank_a");
  r.rank_b = in.get<int>(j, p, "rank_b");
  r.host_a = in.get<std::string>(j, p, "host_a");
  r.host_b = in.get<std::string>(j, p, "host_b");
  r.size_bytes = in.get<std::uint64_t>(j, p, "size_bytes");
  r.window = in.get<int>(j, p, "window");
  r.time_us = read_stats(in, in.at(j, p, "time_us"), FieldReader::join(p, "time_us"));
  r.bw_gbps = in.get<double>(j, p, "bw_gbps");
  r.peak_bw_gbps = in.get<double>(j, p, "peak_bw_gbps");
  r.msg_rate_mps = in.get<double>(j, p, "msg_rate_mps");
  r.transports = in.get<std::string>(j, p, "transports");
  r.mem = in.get_or<std::string>(j, p, "mem", "host");
  r.mem_path = in.get_or<std::string>(j, p, "mem_path", "host");
  r.samples_us = in.get<std::vector<double>>(j, p, "samples_us");
  r.stalls = read_stalls(in, j, p);
  r.nic_counters = read_nic_counters(in, j, p);
  if (j.contains("pattern")) {
    const json& pj = j.at("pattern");
    const std::string pp = FieldReader::join(p, "pattern");
    measure::PatternFlowInfo info;
    info.pattern = in.get<std::string>(pj, pp, "name");
    info.round = in.get<int>(pj, pp, "round");
    info.hub_host = in.get_or<std::string>(pj, pp, "hub_host", "");
    info.hub_rank = in.get_or<int>(pj, pp, "hub_rank", -1);
    info.flows = in.get<int>(pj, pp, "flows");
    info.aggregate_bw_gbps = in.get<double>(pj, pp, "aggregate_bw_gbps");
    info.fairness_jain = in.get<double>(pj, pp, "fairness_jain");
    r.pattern = info;
  }
  return r;
}

measure::ProbeRow read_probe_row(const FieldReader& in, const json& j, const std::string& p) {
  measure::ProbeRow r;
  r.test = in.get<std::string>(j, p, "test");
  r.rank_a = in.get<int>(j, p, "rank_a");
  r.rank_b = in.get<int>(j, p, "rank_b");
  r.host_a = in.get<std::string>(j, p, "host_a");
  r.host_b = in.get<std::string>(j, p, "host_b");
  r.device_a = in.get<std::string>(j, p, "device_a");
  r.device_b = in.get<std::string>(j, p, "device_b");
  r.bidirectional = in.get<bool>(j, p, "bidirectional");
  r.size_bytes = in.get<std::uint64_t>(j, p, "size_bytes");
  r.iterations = in.get<int>(j, p, "iterations");
  r.qps = in.get<int>(j, p, "qps");
  r.tx_depth = in.get<int>(j, p, "tx_depth");
  r.mtu_bytes = in.get<std::uint32_t>(j, p, "mtu_bytes");
  r.inline_bytes = in.get<int>(j, p, "inline_bytes");
  r.gid_index_a = in.get<int>(j, p, "gid_index_a");
  r.gid_index_b = in.get<int>(j, p, "gid_index_b");
  r.line_rate_gbit = in.get<double>(j, p, "line_rate_gbit");
  r.time_us = read_stats(in, in.at(j, p, "time_us"), FieldReader::join(p, "time_us"));
  r.bw_gbps = in.get<double>(j, p, "bw_gbps");
  r.peak_bw_gbps = in.get<double>(j, p, "peak_bw_gbps");
  r.msg_rate_mps = in.get<double>(j, p, "msg_rate_mps");
  r.samples_us = in.get<std::vector<double>>(j, p, "samples_us");
  r.nic_counters = read_nic_counters(in, j, p);
  return r;
}

template <typename Row, typename ReadRow>
std::vector<Row> read_rows(const FieldReader& in, const json& section, const std::string& path,
                           ReadRow read_row) {
  const json& rows = in.at(section, path, "rows");
  std::vector<Row> out;
  out.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out.push_back(read_row(in, rows[i], fmt::format("{}.rows[{}]", path, i)));
  }
  return out;
}

// ---- params (free-form objects in files of every version: absent keys take defaults) ----

}  // namespace

using nlohmann::json;

json to_json(const CollectiveSetup& p) {
  return {{"collective", p.collective},
          {"root", p.root},
          {"tuning_source", or_null(p.tuning_source)},
          {"min_bytes", p.min_bytes},
          {"max_bytes", p.max_bytes},
          {"types", p.types},
          {"ops", p.ops},
          {"algorithms", p.algorithms},
          {"chunk_bytes", p.chunk_bytes},
          {"timeout_s", p.timeout_s},
          {"mem", p.mem},
          {"mem_path", p.mem_path},
          {"stage_chunk_bytes", p.stage_chunk_bytes}};
}

void read_collective_setup(const FieldReader& in, const json& j, const std::string& p,
                           CollectiveSetup& o) {
  o.collective = in.get_or<std::string>(j, p, "collective", "");
  o.root = in.get_or<int>(j, p, "root", 0);
  if (j.contains("tuning_source") && !j["tuning_source"].is_null()) {
    o.tuning_source = in.get<std::string>(j, p, "tuning_source");
  }
  o.min_bytes = in.get_or<std::uint64_t>(j, p, "min_bytes", 0);
  o.max_bytes = in.get_or<std::uint64_t>(j, p, "max_bytes", 0);
  o.types = in.get_or<std::vector<std::string>>(j, p, "types", {});
  o.ops = in.get_or<std::vector<std::string>>(j, p, "ops", {});
  o.algorithms = in.get_or<std::vector<std::string>>(j, p, "algorithms", {});
  o.chunk_bytes = in.get_or<std::uint64_t>(j, p, "chunk_bytes", 0);
  o.timeout_s = in.get_or<double>(j, p, "timeout_s", 0);
  o.mem = in.get_or<std::string>(j, p, "mem", "host");
  o.mem_path = in.get_or<std::string>(j, p, "mem_path", "host");
  o.stage_chunk_bytes = in.get_or<std::uint64_t>(j, p, "stage_chunk_bytes", 0);
}

namespace {

json to_json(const CollectiveParams& p) {
  json j = to_json(static_cast<const CollectiveSetup&>(p));
  j["step_factor"] = p.step_factor;
  j["step_bytes"] = p.step_bytes;
  j["iters"] = p.iters;
  j["warmup_iters"] = p.warmup_iters;
  j["warmup_ms"] = p.warmup_ms;
  j["check"] = p.check;
  if (p.counts) j["counts"] = *p.counts;
  return j;
}

CollectiveParams read_collective_params(const FieldReader& in, const json& j,
                                        const std::string& p) {
  CollectiveParams o;
  read_collective_setup(in, j, p, o);
  o.step_factor = in.get_or<double>(j, p, "step_factor", 0);
  o.step_bytes = in.get_or<std::uint64_t>(j, p, "step_bytes", 0);
  o.iters = in.get_or<int>(j, p, "iters", 0);
  o.warmup_iters = in.get_or<int>(j, p, "warmup_iters", 0);
  o.warmup_ms = in.get_or<double>(j, p, "warmup_ms", 0);
  o.check = in.get_or<bool>(j, p, "check", true);
  if (j.contains("counts")) o.counts = in.get<std::string>(j, p, "counts");
  return o;
}

json to_json(const P2pParams& p) {
  return {{"min_bytes", p.min_bytes},     {"max_bytes", p.max_bytes},
          {"step_factor", p.step_factor}, {"latency_iters", p.latency_iters},
          {"bw_iters", p.bw_iters},       {"warmup_iters", p.warmup_iters},
          {"window", p.window},           {"pairs", p.pairs},
          {"timeout_s", p.timeout_s},     {"mem", p.mem},
          {"mem_path", p.mem_path},       {"stage_chunk_bytes", p.stage_chunk_bytes}};
}

P2pParams read_p2p_params(const FieldReader& in, const json& j, const std::string& p) {
  P2pParams o;
  o.min_bytes = in.get_or<std::uint64_t>(j, p, "min_bytes", 0);
  o.max_bytes = in.get_or<std::uint64_t>(j, p, "max_bytes", 0);
  o.step_factor = in.get_or<double>(j, p, "step_factor", 0);
  o.latency_iters = in.get_or<int>(j, p, "latency_iters", 0);
  o.bw_iters = in.get_or<int>(j, p, "bw_iters", 0);
  o.warmup_iters = in.get_or<int>(j, p, "warmup_iters", 0);
  o.window = in.get_or<int>(j, p, "window", 0);
  o.pairs = in.get_or<std::string>(j, p, "pairs", "");
  o.timeout_s = in.get_or<double>(j, p, "timeout_s", 0);
  o.mem = in.get_or<std::vector<std::string>>(j, p, "mem", {});
  o.mem_path = in.get_or<std::string>(j, p, "mem_path", "");
  o.stage_chunk_bytes = in.get_or<std::uint64_t>(j, p, "stage_chunk_bytes", 0);
  return o;
}

json to_json(const ProbeParams& p) {
  return {{"test", p.test},
          {"verb", p.verb},
          {"metric", p.metric},
          {"sizes_bytes", p.sizes_bytes},
          {"iterations", p.iterations},
          {"warmup", p.warmup},
          {"qps", p.qps},
          {"tx_depth", p.tx_depth},
          {"rx_depth", p.rx_depth},
          {"inline_bytes_requested", p.inline_bytes_requested},
          {"cq_moderation", p.cq_moderation},
          {"mtu_bytes_requested", p.mtu_bytes_requested},
          {"gid_index_requested", p.gid_index_requested},
          {"devices", p.devices},
          {"bidirectional", p.bidirectional},
          {"qp_timeout", p.qp_timeout},
          {"retry_count", p.retry_count},
          {"rnr_retry", p.rnr_retry},
          {"service_level", p.service_level},
          {"traffic_class", p.traffic_class},
          {"hop_limit", p.hop_limit},
          {"pkey_index", p.pkey_index},
          {"bind_to_nic_numa", p.bind_to_nic_numa},
          {"mem", p.mem},
          {"mem_initiator", p.mem_initiator},
          {"mem_responder", p.mem_responder},
          {"timeout_s", p.timeout_s}};
}

ProbeParams read_probe_params(const FieldReader& in, const json& j, const std::string& p) {
  ProbeParams o;
  o.test = in.get_or<std::string>(j, p, "test", "");
  o.verb = in.get_or<std::string>(j, p, "verb", "");
  o.metric = in.get_or<std::string>(j, p, "metric", "");
  o.sizes_bytes = in.get_or<std::vector<std::uint64_t>>(j, p, "sizes_bytes", {});
  o.iterations = in.get_or<int>(j, p, "iterations", 0);
  o.warmup = in.get_or<int>(j, p, "warmup", 0);
  o.qps = in.get_or<int>(j, p, "qps", 0);
  o.tx_depth = in.get_or<int>(j, p, "tx_depth", 0);
  o.rx_depth = in.get_or<int>(j, p, "rx_depth", 0);
  o.inline_bytes_requested = in.get_or<int>(j, p, "inline_bytes_requested", 0);
  o.cq_moderation = in.get_or<int>(j, p, "cq_moderation", 0);
  o.mtu_bytes_requested = in.get_or<std::uint32_t>(j, p, "mtu_bytes_requested", 0);
  o.gid_index_requested = in.get_or<int>(j, p, "gid_index_requested", -1);
  o.devices = in.get_or<std::vector<std::string>>(j, p, "devices", {});
  o.bidirectional = in.get_or<bool>(j, p, "bidirectional", false);
  o.qp_timeout = in.get_or<int>(j, p, "qp_timeout", 0);
  o.retry_count = in.get_or<int>(j, p, "retry_count", 0);
  o.rnr_retry = in.get_or<int>(j, p, "rnr_retry", 0);
  o.service_level = in.get_or<int>(j, p, "service_level", 0);
  o.traffic_class = in.get_or<int>(j, p, "traffic_class", 0);
  o.hop_limit = in.get_or<int>(j, p, "hop_limit", 0);
  o.pkey_index = in.get_or<int>(j, p, "pkey_index", 0);
  o.bind_to_nic_numa = in.get_or<bool>(j, p, "bind_to_nic_numa", false);
  o.mem = in.get_or<std::string>(j, p, "mem", "");
  o.mem_initiator = in.get_or<std::string>(j, p, "mem_initiator", "");
  o.mem_responder = in.get_or<std::string>(j, p, "mem_responder", "");
  o.timeout_s = in.get_or<double>(j, p, "timeout_s", 0);
  return o;
}

template <typename Params, typename ReadParams>
std::optional<Params> read_params(const FieldReader& in, const json& section,
                                  const std::string& path, ReadParams read) {
  const json& p = in.at(section, path, "params");
  if (p.is_object() && p.empty()) return std::nullopt;
  return read(in, p, FieldReader::join(path, "params"));
}

template <typename Params>
json params_json(const std::optional<Params>& p) {
  return p ? to_json(*p) : json::object();
}

// ---- job and environment ----

json to_json(const Job& job) {
  return {{"ranks", job.ranks},
          {"bootstrap", job.bootstrap},
          {"hosts", job.hosts},
          {"threads_per_host", job.threads_per_host}};
}

Job read_job(const FieldReader& in, const json& j) {
  Job job;
  job.ranks = in.get_or<int>(j, "job", "ranks", 0);
  job.bootstrap = in.get_or<std::string>(j, "job", "bootstrap", "");
  job.hosts = in.get_or<std::vector<std::string>>(j, "job", "hosts", {});
  if (j.contains("threads_per_host")) {
    for (const auto& [host, n] : j["threads_per_host"].items()) {
      job.threads_per_host[host] = in.as<int>(n, fmt::format("job.threads_per_host.{}", host));
    }
  }
  return job;
}

json to_json(const VerbsPort& p) {
  return {{"rank", p.rank},
          {"device", p.device},
          {"link_layer", p.link_layer},
          {"data_rate_gbit", p.data_rate_gbit},
          {"gid_index", p.gid_index},
          {"gid", p.gid},
          {"active_mtu_bytes", p.active_mtu_bytes},
          {"binding", p.binding},
          {"mem_initiator", p.mem_initiator},
          {"mem_responder", p.mem_responder},
          {"registration", p.registration},
          {"gpu", p.gpu},
          {"cuda_device", p.cuda_device},
          {"gpu_name", p.gpu_name},
          {"gpu_nic_path", p.gpu_nic_path},
          {"gpu_choice", p.gpu_choice},
          {"gpu_warnings", p.gpu_warnings}};
}

VerbsPort read_verbs_port(const FieldReader& in, const json& j, const std::string& p) {
  VerbsPort v;
  v.rank = in.get<int>(j, p, "rank");
  v.device = in.get<std::string>(j, p, "device");
  v.link_layer = in.get_or<std::string>(j, p, "link_layer", "");
  v.data_rate_gbit = in.get_or<double>(j, p, "data_rate_gbit", 0);
  v.gid_index = in.get_or<int>(j, p, "gid_index", -1);
  v.gid = in.get_or<std::string>(j, p, "gid", "");
  v.active_mtu_bytes = in.get_or<std::uint32_t>(j, p, "active_mtu_bytes", 0);
  v.binding = in.get_or<std::string>(j, p, "binding", "");
  v.mem_initiator = in.get_or<std::string>(j, p, "mem_initiator", "");
  v.mem_responder = in.get_or<std::string>(j, p, "mem_responder", "");
  v.registration = in.get_or<std::string>(j, p, "registration", "");
  v.gpu = in.get_or<std::string>(j, p, "gpu", "");
  v.cuda_device = in.get_or<int>(j, p, "cuda_device", -1);
  v.gpu_name = in.get_or<std::string>(j, p, "gpu_name", "");
  v.gpu_nic_path = in.get_or<std::string>(j, p, "gpu_nic_path", "");
  v.gpu_choice = in.get_or<std::string>(j, p, "gpu_choice", "");
  v.gpu_warnings = in.get_or<std::vector<std::string>>(j, p, "gpu_warnings", {});
  return v;
}

json to_json(const RankRail& r) {
  return {{"rank", r.rank},           {"host", r.host},     {"nic", r.nic},
          {"netdev", r.netdev},       {"reason", r.reason}, {"lane_nics", r.lane_nics},
          {"numa_node", r.numa_node}, {"cpus", r.cpus},     {"binding", r.binding}};
}

RankRail read_rank_rail(const FieldReader& in, const json& j, const std::string& p) {
  RankRail r;
  r.rank = in.get<int>(j, p, "rank");
  r.host = in.get<std::string>(j, p, "host");
  r.nic = in.get<std::string>(j, p, "nic");
  r.netdev = in.get_or<std::string>(j, p, "netdev", "");
  r.reason = in.get_or<std::string>(j, p, "reason", "");
  r.lane_nics = in.get_or<std::vector<std::string>>(j, p, "lane_nics", {});
  r.numa_node = in.get_or<int>(j, p, "numa_node", -1);
  r.cpus = in.get_or<std::string>(j, p, "cpus", "");
  r.binding = in.get_or<std::string>(j, p, "binding", "");
  return r;
}

json to_json(const TransportClass& c) {
  return {{"lanes", c.lanes}, {"pairs", c.pairs}, {"example", c.example}};
}

// The n(n-1) rank pairs' lanes grouped by description (jobs have a handful of distinct ones).
std::vector<TransportClass> transport_classes(const std::map<std::string, std::string>& pairs) {
  std::vector<TransportClass> out;
  std::map<std::string, std::size_t> index;
  for (const auto& [pair, lanes] : pairs) {
    const auto [it, fresh] = index.try_emplace(lanes, out.size());
    if (fresh) out.push_back(TransportClass{lanes, 0, pair});
    ++out[it->second].pairs;
  }
  return out;
}

// n ranks have n(n-1) ordered pairs: more than kRankSamplesKeptUpToRanks ranks' worth.
bool summarise_transports(std::size_t pairs, bool keep_rank_samples) {
  const std::size_t k = kRankSamplesKeptUpToRanks;
  return !keep_rank_samples && pairs > k * (k - 1);
}

json to_json(const Environment& env, bool keep_rank_samples) {
  json j = {{"build", env.build}, {"ucx_env", env.ucx_env}};
  if (env.ibscope_env) j["ibscope_env"] = *env.ibscope_env;
  if (env.ucx_env_set) j["ucx_env_set"] = *env.ucx_env_set;
  if (env.ucx_version) j["ucx_version"] = *env.ucx_version;
  if (env.ibverbs_version) j["ibverbs_version"] = *env.ibverbs_version;
  std::optional<std::vector<TransportClass>> classes = env.transport_classes;
  if (env.transports && summarise_transports(env.transports->size(), keep_rank_samples)) {
    classes = transport_classes(*env.transports);
  } else if (env.transports) {
    j["transports"] = *env.transports;
  }
  if (classes) {
    json a = json::array();
    for (const auto& c : *classes) a.push_back(to_json(c));
    j["transport_classes"] = std::move(a);
  }
  if (env.verbs_ports) {
    json ports = json::array();
    for (const auto& p : *env.verbs_ports) ports.push_back(to_json(p));
    j["verbs_ports"] = std::move(ports);
  }
  if (env.rails) {
    json rails = json::array();
    for (const auto& r : *env.rails) rails.push_back(to_json(r));
    j["rails"] = std::move(rails);
  }
  return j;
}

std::map<std::string, std::string> read_string_map(const FieldReader& in, const json& j,
                                                   const std::string& path) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) in.fail(path, fmt::format("expected an object, got {}", j.type_name()));
  for (const auto& [k, v] : j.items())
    out[k] = in.as<std::string>(v, fmt::format("{}.{}", path, k));
  return out;
}

Environment read_environment(const FieldReader& in, const json& j) {
  Environment env;
  if (j.contains("ucx_version"))
    env.ucx_version = in.get<std::string>(j, "environment", "ucx_version");
  if (j.contains("ibverbs_version"))
    env.ibverbs_version = in.get<std::string>(j, "environment", "ibverbs_version");
  env.build = in.get_or<std::string>(j, "environment", "build", "");
  if (j.contains("transports")) {
    env.transports = read_string_map(in, j["transports"], "environment.transports");
  }
  if (j.contains("ucx_env")) env.ucx_env = read_string_map(in, j["ucx_env"], "environment.ucx_env");
  if (j.contains("ucx_env_set")) {
    env.ucx_env_set = read_string_map(in, j["ucx_env_set"], "environment.ucx_env_set");
  }
  if (j.contains("ibscope_env")) {
    env.ibscope_env = read_string_map(in, j["ibscope_env"], "environment.ibscope_env");
  }
  if (j.contains("verbs_ports") && !j["verbs_ports"].is_null()) {
    const json& ports = j["verbs_ports"];
    if (!ports.is_array()) in.fail("environment.verbs_ports", "expected an array");
    env.verbs_ports.emplace();
    for (std::size_t i = 0; i < ports.size(); ++i) {
      env.verbs_ports->push_back(
          read_verbs_port(in, ports[i], fmt::format("environment.verbs_ports[{}]", i)));
    }
  }
  if (j.contains("transport_classes")) {
    const json& a = j["transport_classes"];
    if (!a.is_array()) in.fail("environment.transport_classes", "expected an array");
    env.transport_classes.emplace();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string p = fmt::format("environment.transport_classes[{}]", i);
      env.transport_classes->push_back(TransportClass{in.get<std::string>(a[i], p, "lanes"),
                                                      in.get<std::uint64_t>(a[i], p, "pairs"),
                                                      in.get<std::string>(a[i], p, "example")});
    }
  }
  if (j.contains("rails")) {
    const json& rails = j["rails"];
    if (!rails.is_array()) in.fail("environment.rails", "expected an array");
    env.rails.emplace();
    for (std::size_t i = 0; i < rails.size(); ++i) {
      env.rails->push_back(read_rank_rail(in, rails[i], fmt::format("environment.rails[{}]", i)));
    }
  }
  return env;
}

}  // namespace

// ---- public to this module ----

measure::Stats read_stats(const FieldReader& in, const json& j, const std::string& path) {
  measure::Stats s;
  s.n = in.get<std::size_t>(j, path, "n");
  s.min = in.get<double>(j, path, "min");
  s.p50 = in.get<double>(j, path, "p50");
  s.p99 = in.get<double>(j, path, "p99");
  s.p99_9 = in.get_or<double>(j, path, "p99_9", 0.0);
  s.max = in.get<double>(j, path, "max");
  s.mean = in.get<double>(j, path, "mean");
  s.sd = in.get<double>(j, path, "sd");
  return s;
}

json to_json(const measure::Stats& s) {
  return {{"n", s.n},         {"min", s.min}, {"p50", s.p50},   {"p99", s.p99},
          {"p99_9", s.p99_9}, {"max", s.max}, {"mean", s.mean}, {"sd", s.sd}};
}

json to_json(const measure::CollectiveRow& r) {
  json j = {{"iteration_us", to_json(r.iteration_us)}, {"samples_us", r.samples_us}};
  for (const CollectiveColumn& col : collective_columns()) {
    if (!col.in_json || (col.omitted != nullptr && col.omitted(r))) continue;
    j[std::string(col.key)] = to_json(col.get(r));
  }
  put_mem(j, memory::name_of(r.mem), memory::name_of(r.mem_path));
  if (!r.stalls.empty()) j["stalls"] = to_json(r.stalls);
  return j;
}

json to_json(const measure::P2pRow& r) {
  json j = {{"test", r.test},
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
  put_mem(j, r.mem, r.mem_path);
  put_nic_counters(j, r.nic_counters, false);  // a pair's two hosts
  if (r.pattern) {
    json pj = {{"name", r.pattern->pattern},
               {"round", r.pattern->round},
               {"flows", r.pattern->flows},
               {"aggregate_bw_gbps", r.pattern->aggregate_bw_gbps},
               {"fairness_jain", r.pattern->fairness_jain}};
    if (r.pattern->hub_rank >= 0) {
      pj["hub_host"] = r.pattern->hub_host;
      pj["hub_rank"] = r.pattern->hub_rank;
    }
    j["pattern"] = std::move(pj);
  }
  return j;
}

json to_json(const measure::ProbeRow& r) {
  json j = {{"test", r.test},
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
  put_nic_counters(j, r.nic_counters, false);  // a pair's two hosts
  return j;
}

json to_json(const Document& d) {
  json j;
  j["schema_version"] = d.schema_version;
  j["tool"] = {{"name", d.tool.name},
               {"version", d.tool.version},
               {"git_sha", d.tool.git_sha},
               {"build_type", d.tool.build_type}};
  j["command"] = {{"subcommand", d.command.subcommand}, {"argv", d.command.argv}};
  j["started_utc"] = d.started_utc;
  j["finished_utc"] = or_null(d.finished_utc);
  j["complete"] = d.complete;
  j["error"] =
      d.error ? json{{"kind", d.error->kind}, {"message", d.error->message}} : json(nullptr);
  j["job"] = to_json(d.job);
  j["environment"] = to_json(d.environment, d.keep_rank_samples);
  j["warnings"] = d.warnings;
  auto rows = [](const auto& v) {
    json a = json::array();
    for (const auto& r : v) a.push_back(to_json(r));
    return a;
  };
  json collective_rows = json::array();
  for (const auto& r : d.collectives.rows) {
    collective_rows.push_back(to_json(r));
    // Every host's NICs: summarised like the per-rank samples in a large job.
    put_nic_counters(
        collective_rows.back(), r.nic_counters,
        summarise_ranks(static_cast<std::size_t>(std::max(r.ranks, 0)), d.keep_rank_samples));
  }
  j["collectives"] = {{"params", params_json(d.collectives.params)},
                      {"rows", std::move(collective_rows)}};
  j["p2p"] = {{"params", params_json(d.p2p.params)}, {"rows", rows(d.p2p.rows)}};
  if (d.probes) {
    j["probes"] = {{"params", params_json(d.probes->params)}, {"rows", rows(d.probes->rows)}};
  }
  if (d.topology) j["topology"] = topology_section_json(*d.topology);
  if (d.tuning) j["tuning"] = to_json(*d.tuning);
  if (d.acceptance) j["acceptance"] = to_json(*d.acceptance, d.keep_rank_samples);
  if (d.soak) j["soak"] = to_json(*d.soak, d.keep_rank_samples);
  if (d.loopback) j["loopback"] = to_json(*d.loopback);
  return j;
}

Document document_from_json(const json& j, std::string_view source) {
  const FieldReader in(source);
  Document d;
  d.schema_version = in.get<int>(j, "", "schema_version");
  const json& tool = in.at(j, "", "tool");
  d.tool.name = in.get<std::string>(tool, "tool", "name");
  d.tool.version = in.get<std::string>(tool, "tool", "version");
  d.tool.git_sha = in.get<std::string>(tool, "tool", "git_sha");
  d.tool.build_type = in.get_or<std::string>(tool, "tool", "build_type", "");
  const json& command = in.at(j, "", "command");
  d.command.subcommand = in.get<std::string>(command, "command", "subcommand");
  d.command.argv = in.get<std::vector<std::string>>(command, "command", "argv");
  d.started_utc = in.get<std::string>(j, "", "started_utc");
  if (!in.at(j, "", "finished_utc").is_null()) {
    d.finished_utc = in.get<std::string>(j, "", "finished_utc");
  }
  d.complete = in.get<bool>(j, "", "complete");
  if (const json& e = in.at(j, "", "error"); !e.is_null()) {
    d.error = RunError{in.get<std::string>(e, "error", "kind"),
                       in.get<std::string>(e, "error", "message")};
  }
  d.job = read_job(in, in.at(j, "", "job"));
  d.environment = read_environment(in, in.at(j, "", "environment"));
  d.warnings = in.get<std::vector<std::string>>(j, "", "warnings");
  const json& coll = in.at(j, "", "collectives");
  d.collectives.params =
      read_params<CollectiveParams>(in, coll, "collectives", read_collective_params);
  d.collectives.rows =
      read_rows<measure::CollectiveRow>(in, coll, "collectives", read_collective_row);
  const json& p2p = in.at(j, "", "p2p");
  d.p2p.params = read_params<P2pParams>(in, p2p, "p2p", read_p2p_params);
  d.p2p.rows = read_rows<measure::P2pRow>(in, p2p, "p2p", read_p2p_row);
  if (j.contains("probes")) {
    const json& probes = j["probes"];
    d.probes.emplace();
    d.probes->params = read_params<ProbeParams>(in, probes, "probes", read_probe_params);
    d.probes->rows = read_rows<measure::ProbeRow>(in, probes, "probes", read_probe_row);
  }
  if (j.contains("topology")) d.topology = topology_from_section_json(j["topology"], source);
  if (j.contains("tuning") && !j["tuning"].is_null()) {
    d.tuning = tuning_from_json(j["tuning"], std::string(source), TuningUse::kRecord);
  }
  if (j.contains("acceptance") && !j["acceptance"].is_null()) {
    d.acceptance = acceptance_from_json(j["acceptance"], source);
  }
  if (j.contains("soak") && !j["soak"].is_null()) d.soak = soak_from_json(j["soak"], source);
  if (j.contains("loopback") && !j["loopback"].is_null()) {
    d.loopback = read_loopback(in, j["loopback"], "loopback");
  }
  return d;
}

}  // namespace ibscope::results
