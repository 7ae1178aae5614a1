#include "ibscope/probes/probe_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/gpu/cuda.hpp"
#include "ibscope/measure/buffer_budget.hpp"
#include "ibscope/measure/pair_schedule.hpp"
#include "ibscope/measure/row_counters.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/probes/engines.hpp"
#include "ibscope/probes/peer_info.hpp"
#include "ibscope/topo/discover.hpp"
#include "ibscope/topo/gpu_choice.hpp"
#include "ibscope/topo/numa_binding.hpp"
#include "ibscope/topo/rail_choice.hpp"
#include "ibscope/topo/rdma_sysfs.hpp"
#include "ibscope/transport/verbs/nic_ports.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::probes {
namespace {

using nlohmann::json;

bootstrap::Bytes to_bytes(const std::string& text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return bootstrap::Bytes(p, p + text.size());
}

json parse_bytes(const bootstrap::Bytes& bytes, std::string_view what, int rank) {
  try {
    return json::parse(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  } catch (const json::exception& e) {
    throw RemoteError(fmt::format("rank {} sent malformed {}: {}", rank, what, e.what()));
  }
}

struct LocalPort {
  std::shared_ptr<verbs::DeviceContext> device;
  verbs::PortInfo port;
  int gid_index = -1;
  std::string binding = "not bound (--no-bind)";
  std::string mem_initiator, mem_responder;
  int cuda_device = -1;
  std::string gpu, gpu_name, gpu_nic_path, registration, gpu_choice;
  std::vector<std::string> gpu_warnings;
};

/// Chooses this rank's GPU for its NIC, makes it current, and registers one small buffer on it
/// to learn (and prove) how GPU memory registers with the NIC.
void set_up_gpu(LocalPort& local, const std::string& host, int local_rank) {
  const topo::HostTopology topology = topo::discover_host_topology(host);
  const topo::GpuChoice choice = topo::choose_gpu(topology, local_rank, local.device->name());
  const auto ordinal = gpu::device_by_pci_bus_id(choice.pci_bus_id);
  if (!ordinal) {
    throw UsageError(
        fmt::format("GPU {} chosen for local rank {} on {} is not visible to CUDA: check "
                    "CUDA_VISIBLE_DEVICES and nvidia-smi",
                    choice.pci_bus_id, local_rank, host));
  }
  gpu::set_device(*ordinal);
  const gpu::DeviceInfo info = gpu::device_info(*ordinal);
  local.cuda_device = *ordinal;
  local.gpu = choice.pci_bus_id;
  local.gpu_name = info.name;
  local.gpu_nic_path = std::string(topo::to_string(choice.to_nic));
  local.gpu_choice = choice.reason;
  local.gpu_warnings = topo::gpu_nic_warnings(choice);
  constexpr std::size_t kTrialBytes = 64 * 1024;
  gpu::DeviceMemory trial(kTrialBytes, *ordinal);
  auto pd = verbs::ProtectionDomain::create(local.device);
  const auto mr = verbs::MemoryRegion::for_device(
      pd, trial.data(), kTrialBytes, verbs::kLocalWrite | verbs::kRemoteWrite | verbs::kRemoteRead);
  local.registration = std::string(verbs::to_string(mr.method()));
}

// -d names no device: the rank's own NIC, its rail as the UCX jobs choose it
// (topo/rail_choice.hpp: the NIC closest to the rank's GPU, else the ACTIVE NICs in name order,
// one per local rank); the first device when the topology offers none.
verbs::DevicePort rail_device(const bootstrap::Bootstrap& boot) {
  // As measure::set_up_rail: no hwloc discovery on a host without RDMA devices.
  if (!topo::RdmaSysfs().has_devices()) return {};
  try {
    topo::HostTopology host = topo::discover_host_topology(boot.host(boot.rank()));
    verbs::fill_rdma_ports(host);
    // As measure::set_up_rail: on a host with GPUs each rank's GPU and NIC pair up.
    const auto rail = topo::choose_rail(host, boot.local_rank(), {}, /*gpu_buffers=*/true);
    if (rail) return {rail->nic, static_cast<std::uint8_t>(rail->port)};
  } catch (const Error&) {
    // No topology: opening the first device below says what is wrong, as without rails.
  }
  return {};
}

LocalPort open_local_port(const ProbeOptions& o, const bootstrap::Bootstrap& boot) {
  verbs::DevicePort chosen =
      o.devices[static_cast<std::size_t>(boot.local_rank()) % o.devices.size()];
  if (chosen.device.empty()) chosen = rail_device(boot);
  LocalPort local;
  local.device = verbs::DeviceContext::open(chosen.device);
  local.port = local.device->require_active_port(chosen.port);
  const auto& gids = local.port.gids;
  if (o.gid_index >= 0) {
    const bool present = std::any_of(gids.begin(), gids.end(), [&](const verbs::GidEntry& g) {
      return g.index == static_cast<std::uint32_t>(o.gid_index);
    });
    if (!present) {
      std::string have;
      for (const auto& g : gids) {
        have += fmt::format("{}{} ({} {})", have.empty() ? "" : ", ", g.index, to_string(g.type),
                            g.text());
      }
      throw UsageError(fmt::format("-x {}: port {} of {} has no GID at that index; it has: {}",
                                   o.gid_index, local.port.port, local.device->name(),
                                   have.empty() ? "none" : have));
    }
    local.gid_index = o.gid_index;
  } else if (local.port.ethernet || local.port.lid == 0) {
    const auto chosen = verbs::choose_gid_index(local.port);
    if (!chosen) {
      throw verbs::EnvironmentError(fmt::format(
          "port {} of {} has no GID to address it by (RoCE needs one): give its network "
          "interface an IP address",
          local.port.port, local.device->name()));
    }
    local.gid_index = static_cast<int>(*chosen);
  }
  return local;
}

RankPort describe(const LocalPort& local) {
  RankPort r;
  r.device = fmt::format("{}:{}", local.device->name(), local.port.port);
  r.link_layer = local.port.link_layer;
  r.data_rate_gbit = local.port.data_rate_gbps;
  r.gid_index = local.gid_index;
  for (const auto& g : local.port.gids) {
    if (static_cast<int>(g.index) == local.gid_index) r.gid = g.text();
  }
  r.active_mtu_bytes = local.port.active_mtu_bytes;
  r.binding = local.binding;
  r.mem_initiator = local.mem_initiator;
  r.mem_responder = local.mem_responder;
  r.gpu = local.gpu;
  r.cuda_device = local.cuda_device;
  r.gpu_name = local.gpu_name;
  r.gpu_nic_path = local.gpu_nic_path;
  r.registration = local.registration;
  r.gpu_choice = local.gpu_choice;
  r.gpu_warnings = local.gpu_warnings;
  return r;
}

/// What one end measured at one size.
json measure_size(const RcLink& link, const ProbeOptions& o, bool initiator, std::size_t size,
                  ProgressGuard& guard) {
  const ProbeTest& test = *o.test;
  json out = {{"size", size}};
  if (test.metric == Metric::kLatency) {
    std::vector<double> samples;
    switch (test.verb) {
      case Verb::kWrite:
        samples = run_write_latency(link, initiator, size, o.warmup, o.iterations, guard);
        break;
      case Verb::kRead:
        samples = run_read_latency(link, initiator, size, o.warmup, o.iterations, guard);
        break;
      case Verb::kSend:
        samples = run_send_latency(link, initiator, size, o.warmup, o.iterations, guard);
        break;
    }
    out["samples_s"] = std::move(samples);
    return out;
  }
  const bool sends = initiator || o.bidirectional;
  const bool receives = test.verb == Verb::kSend && (!initiator || o.bidirectional);
  StreamSpec spec;
  spec.verb = test.verb;
  spec.size_bytes = size;
  spec.signal_every = std::min(o.cq_moderation, link.tx_depth());
  if (o.warmup > 0) {
    spec.messages_per_qp = sends ? o.warmup : 0;
    spec.receives_per_qp = receives ? static_cast<std::uint64_t>(o.warmup) : 0;
    run_stream(link, spec, guard);
  }
  spec.messages_per_qp = sends ? o.iterations : 0;
  spec.receives_per_qp = receives ? static_cast<std::uint64_t>(o.iterations) : 0;
  spec.send_done = sends;
  const StreamResult r = run_stream(link, spec, guard);
  // The peer may still be streaming into this side: stay until it says it is done, so that no
  // queue pair is torn down under a running measurement.
  if (!initiator || o.bidirectional) wait_for_done(link, guard);
  out["elapsed_s"] = r.elapsed_s;
  out["messages"] = r.messages;
  out["peak_msg_per_s"] =
      peak_message_rate(r.marks, peak_window_messages(r.messages, spec.signal_every));
  return out;
}

measure::ProbeRow build_row(const ProbeOptions& o, const std::vector<RankPort>& ports,
                            const std::vector<std::string>& hosts, int a, int b, const json& end_a,
                            const json& size_a, const json& size_b) {
  measure::ProbeRow row;
  row.test = std::string(o.test->name);
  row.rank_a = a;
  row.rank_b = b;
  row.host_a = hosts[static_cast<std::size_t>(a)];
  row.host_b = hosts[static_cast<std::size_t>(b)];
  const RankPort& pa = ports[static_cast<std::size_t>(a)];
  const RankPort& pb = ports[static_cast<std::size_t>(b)];
  row.device_a = pa.device;
  row.device_b = pb.device;
  row.gid_index_a = pa.gid_index;
  row.gid_index_b = pb.gid_index;
  row.line_rate_gbit = std::min(pa.data_rate_gbit, pb.data_rate_gbit);
  row.bidirectional = o.bidirectional;
  row.size_bytes = size_a.at("size").get<std::uint64_t>();
  row.iterations = o.iterations;
  row.qps = o.qps;
  row.tx_depth = end_a.at("tx_depth").get<int>();
  row.mtu_bytes = end_a.at("mtu_bytes").get<std::uint32_t>();
  row.inline_bytes = end_a.at("inline_bytes").get<int>();
  if (o.test->metric == Metric::kLatency) {
    for (double s : size_a.at("samples_s")) row.samples_us.push_back(s * 1e6);
    row.time_us = measure::summarize(row.samples_us);
    return row;
  }
  const auto add_end = [&](const json& end) {
    const double elapsed = end.at("elapsed_s").get<double>();
    const auto messages = end.at("messages").get<std::uint64_t>();
    if (elapsed <= 0 || messages == 0) return;
    const double bytes = static_cast<double>(messages) * static_cast<double>(row.size_bytes);
    row.bw_gbps += bytes / elapsed / units::kBytesPerGB;
    row.msg_rate_mps += static_cast<double>(messages) / elapsed / 1e6;
    row.peak_bw_gbps += end.at("peak_msg_per_s").get<double>() *
                        static_cast<double>(row.size_bytes) / units::kBytesPerGB;
  };
  add_end(size_a);
  if (o.bidirectional) add_end(size_b);
  return row;
}

// This rank's port, ready for every round: opened, bound to its NIC's NUMA node, its GPU set up
// where one of its roles uses device memory, and one link's buffers checked to fit.
LocalPort prepare_local_port(bootstrap::Bootstrap& boot, const ProbeOptions& o,
                             const std::vector<measure::PairRound>& rounds,
                             std::uint64_t max_size) {
  LocalPort local = open_local_port(o, boot);
  // Before any buffer exists, so that its pages land on the NIC's node.
  if (o.bind_to_nic_numa) {
    local.binding = topo::bind_to_rdma_device_numa_node(local.device->name()).message;
  }
  // Which roles this rank takes decides whether it needs a GPU at all (--mem host,cuda with
  // --pairs first: rank 0 never does).
  bool initiates = false, responds = false;
  for (const auto& round : rounds) {
    for (const auto& [a, b] : round) {
      initiates = initiates || a == boot.rank();
      responds = responds || b == boot.rank();
    }
  }
  if (initiates) local.mem_initiator = std::string(memory::name_of(o.mem.initiator));
  if (responds) local.mem_responder = std::string(memory::name_of(o.mem.responder));
  if ((initiates && o.mem.initiator == MemKind::kCuda) ||
      (responds && o.mem.responder == MemKind::kCuda)) {
    set_up_gpu(local, boot.host(boot.rank()), boot.local_rank());
  } else if (initiates || responds) {
    local.registration = std::string(verbs::to_string(verbs::RegistrationMethod::kHost));
  }
  if (max_size > local.device->limits().max_mr_size) {
    throw UsageError(fmt::format("message size {} is above what {} can register ({})", max_size,
                                 local.device->name(), local.device->limits().max_mr_size));
  }
  if (initiates || responds) {
    // One link at a time: an out and an in buffer per QP, all registered, before any exists.
    const bool on_device = (initiates && o.mem.initiator == MemKind::kCuda) ||
                           (responds && o.mem.responder == MemKind::kCuda);
    const std::uint64_t link_bytes =
        saturating_mul(std::max<std::uint64_t>(max_size, 64), 2ULL * static_cast<unsigned>(o.qps));
    measure::require_memory_here(boot,
                                 {.what = fmt::format("probe {} up to {} on {} QP(s)", o.test->name,
                                                      units::format_size(max_size), o.qps),
                                  .size_flag = "-s/--size or -e/--maxbytes",
                                  .host_bytes_per_rank = on_device ? 0 : link_bytes,
                                  .locked_bytes_per_rank = on_device ? 0 : link_bytes,
                                  .device_bytes_per_rank = on_device ? link_bytes : 0});
  }
  return local;
}

// Every rank's port, on rank 0 only (it builds the rows and prints the ports).
std::vector<RankPort> gather_ports(bootstrap::Bootstrap& boot, const LocalPort& local) {
  const auto all_ports = boot.gather(encode_rank_port(describe(local)), "probe ports");
  std::vector<RankPort> ports;
  for (int r = 0; r < static_cast<int>(all_ports.size()); ++r) {
    ports.push_back(decode_rank_port(all_ports[static_cast<std::size_t>(r)], r));
  }
  return ports;
}

struct RoundLink {
  std::unique_ptr<RcLink> link;  ///< null: this rank sits the round out
  std::string peer;              ///< the partner's label ("" when none)
};

// This rank's link of one round, connected to its partner: every rank takes part in the
// round's barriers, with or without a partner.
RoundLink connect_round(bootstrap::Bootstrap& boot, const ProbeOptions& o, const LocalPort& local,
                        std::size_t round_index, int partner, bool initiator,
                        std::uint64_t max_size) {
  RoundLink out;
  bootstrap::Bytes my_addresses;
  if (partner >= 0) {
    LinkConfig config;
    config.qps = o.qps;
    config.tx_depth = o.tx_depth;
    config.rx_depth = o.rx_depth;
    config.inline_bytes = o.inline_bytes;
    config.buffer_bytes = std::max<std::size_t>(max_size, 64);
    config.receives = o.test->verb == Verb::kSend;
    config.mem = initiator ? o.mem.initiator : o.mem.responder;
    config.cuda_device = local.cuda_device;
    out.link = std::make_unique<RcLink>(local.device, local.port, local.gid_index, config);
    my_addresses = encode_qp_addresses(out.link->addresses());
  }
  // Published, then read from the partner only: O(1) per rank, not every rank's addresses.
  // The key is reused every round; the round number in front of the value proves it fresh.
  const std::string round_tag = fmt::format("{}:", round_index);
  bootstrap::Bytes tagged(reinterpret_cast<const std::byte*>(round_tag.data()),
                          reinterpret_cast<const std::byte*>(round_tag.data()) + round_tag.size());
  tagged.insert(tagged.end(), my_addresses.begin(), my_addresses.end());
  boot.publish("probe.qp", tagged);
  boot.barrier(fmt::format("probe QP addresses, round {}", round_index));
  if (partner >= 0) boot.learn_hosts(std::span(&partner, 1));
  out.peer = partner >= 0 ? verbs::peer_label(partner, boot.host(partner)) : std::string();
  if (out.link) {
    const auto got = boot.lookup("probe.qp", std::span(&partner, 1),
                                 fmt::format("probe QP addresses, round {}", round_index));
    const bootstrap::Bytes& theirs = got.at(0);
    if (theirs.size() < round_tag.size() ||
        !std::equal(round_tag.begin(), round_tag.end(),
                    reinterpret_cast<const char*>(theirs.data()))) {
      throw RemoteError(fmt::format("probe round {}: {} published QP addresses of another round",
                                    round_index, out.peer));
    }
    const auto remote = decode_qp_addresses(
        bootstrap::Bytes(theirs.begin() + static_cast<std::ptrdiff_t>(round_tag.size()),
                         theirs.end()),
        static_cast<std::size_t>(out.link->qps()), out.peer);
    out.link->connect(remote, o.tuning, out.peer);
  }
  boot.barrier(fmt::format("probe connect, round {}", round_index));
  return out;
}

// What this rank measured in one round, every size (none when it sits out; it still takes part
// in each size's barrier).
json measure_round(bootstrap::Bootstrap& boot, const ProbeOptions& o, RcLink* link, bool initiator,
                   std::size_t round_index, const std::string& peer) {
  const int me = boot.rank();
  json mine = {{"sizes", json::array()}};
  if (link != nullptr) {
    mine["registration"] = std::string(verbs::to_string(link->registration()));
    mine["tx_depth"] = link->tx_depth();
    mine["mtu_bytes"] = link->mtu_bytes();
    mine["inline_bytes"] = link->inline_bytes();
  }
  for (std::uint64_t size : o.sizes_bytes) {
    if (link != nullptr) {
      // The latency marker byte must not hold a stale value when the peer's first write lands.
      // (write_lat, the one test that polls it, refuses GPU buffers.)
      if (!link->on_device()) link->in(0)[size - 1] = std::byte{0};
      reset_control(*link);
    }
    boot.barrier(fmt::format("probe {} {} B, round {}", o.test->name, size, round_index));
    if (link == nullptr) continue;
    ProgressGuard guard(&boot, o.timeout_s,
                        fmt::format("rank {} (host {}): {} {} towards {}", me, boot.host(me),
                                    o.test->name, units::format_size(size), peer));
    mine["sizes"].push_back(measure_size(*link, o, initiator, size, guard));
  }
  return mine;
}

// Rank 0's rows of one round, from every rank's gathered results (`results` empty elsewhere).
std::vector<measure::ProbeRow> round_rows(const ProbeOptions& o, const std::vector<RankPort>& ports,
                                          const std::vector<std::string>& hosts,
                                          const measure::PairRound& round,
                                          const std::vector<bootstrap::Bytes>& results) {
  std::vector<measure::ProbeRow> rows;
  for (const auto& [a, b] : round) {
    const json end_a = parse_bytes(results[static_cast<std::size_t>(a)], "probe results", a);
    const json end_b = parse_bytes(results[static_cast<std::size_t>(b)], "probe results", b);
    const auto& sizes_a = end_a.at("sizes");
    const auto& sizes_b = end_b.at("sizes");
    for (std::size_t i = 0; i < sizes_a.size() && i < sizes_b.size(); ++i) {
      rows.push_back(build_row(o, ports, hosts, a, b, end_a, sizes_a[i], sizes_b[i]));
    }
  }
  return rows;
}

}  // namespace

int default_inline_bytes(const ProbeTest& test) noexcept {
  return test.metric == Metric::kLatency && test.verb != Verb::kRead ? kDefaultInlineBytes : 0;
}

void run_probe(bootstrap::Bootstrap& boot, const ProbeOptions& options, const ProbeSinks& sinks) {
  validate(options);
  ProbeOptions o = options;
  if (boot.size() < 2) {
    throw UsageError(fmt::format(
        "probe {} needs at least 2 ranks: run with --np 2 (one host) or under srun/mpirun",
        o.test->name));
  }
  if (o.inline_bytes < 0) o.inline_bytes = default_inline_bytes(*o.test);
  const auto rounds = pair_rounds(o.pairs, boot.size());
  const std::uint64_t max_size = *std::max_element(o.sizes_bytes.begin(), o.sizes_bytes.end());

  const LocalPort local = prepare_local_port(boot, o, rounds, max_size);
  const std::vector<RankPort> ports = gather_ports(boot, local);
  if (boot.rank() == 0 && sinks.ports) sinks.ports(ports);

  const int me = boot.rank();
  measure::RowCounters row_counters(boot, o.nic_counters);
  for (std::size_t round_index = 0; round_index < rounds.size(); ++round_index) {
    const auto& round = rounds[round_index];
    const int partner = measure::partner_in_round(round, me);
    const bool initiator =
        std::any_of(round.begin(), round.end(), [&](const auto& p) { return p.first == me; });
    RoundLink link = connect_round(boot, o, local, round_index, partner, initiator, max_size);
    row_counters.begin();
    const json mine = measure_round(boot, o, link.link.get(), initiator, round_index, link.peer);
    row_counters.end();
    link.link.reset();
    // Rank 0 builds the rows; every rank's sink is called (with none elsewhere), so that every
    // rank sees each round end.
    const auto results =
        boot.gather(to_bytes(mine.dump()), fmt::format("probe results, round {}", round_index));
    const auto counters = row_counters.gather(fmt::format("probe round {}", round_index));
    std::vector<measure::ProbeRow> rows = me == 0
                                              ? round_rows(o, ports, boot.hosts(), round, results)
                                              : std::vector<measure::ProbeRow>{};
    for (auto& row : rows)
      row.nic_counters = measure::deltas_of_hosts(counters, row.host_a, row.host_b);
    if (sinks.rows) sinks.rows(rows);
  }
}

}  // namespace ibscope::probes
