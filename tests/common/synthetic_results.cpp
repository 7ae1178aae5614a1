#include "synthetic_results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ibscope/measure/stats.hpp"

namespace ibscope::testing {
namespace {

// A small deterministic generator (64-bit LCG): the same document on every machine.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : state_(seed * 6364136223846793005ULL + 1) {}
  double uniform() noexcept {  // [0, 1)
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state_ >> 11) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_;
};

std::string host_name(int h) { return fmt::format("gpu-node-{:04d}", h + 1); }

topo::PciePath pcie(int socket, int slot) {
  const int bus = socket * 0x80 + slot * 0x10;
  return topo::PciePath{
      fmt::format("0000:[{:02x}-{:02x}]", socket * 0x80, socket * 0x80 + 0x7f),
      {fmt::format("0000:{:02x}:01.0", bus), fmt::format("0000:{:02x}:00.0", bus + 1)}};
}

topo::HostTopology host_topology(const SyntheticJob& job, int h) {
  topo::HostTopology t;
  t.host = host_name(h);
  for (int l = 0; l < job.ranks_per_host; ++l) t.ranks.push_back(h * job.ranks_per_host + l);
  t.packages = 2;
  t.cores = 112;
  t.pus = 224;
  t.numa_nodes = {{0, "0-55,112-167", 112, 1ULL << 40}, {1, "56-111,168-223", 112, 1ULL << 40}};
  t.rdma_available = true;
  const int half = std::max(1, job.ranks_per_host / 2);
  for (int l = 0; l < job.ranks_per_host; ++l) {
    const int socket = l / half;
    topo::Nic nic;
    nic.name = fmt::format("mlx5_{}", l);
    nic.netdev = fmt::format("ibp{}s0", 0x18 + l * 0x10);
    nic.pci_bus_id = fmt::format("0000:{:02x}:00.0", socket * 0x80 + (l % half) * 0x10 + 2);
    nic.pcie_path = pcie(socket, l % half);
    nic.numa_node = socket;
    nic.pcie_link_gbyte_s = 63.0;
    topo::NicPort port;
    port.state = "ACTIVE";
    port.link_layer = "InfiniBand";
    port.lanes = 4;
    port.speed = "NDR";
    port.lane_rate_gbit_s = 106.25;
    port.line_rate_gbit_s = 425;
    port.data_rate_gbit_s = 400;
    port.active_mtu_bytes = 4096;
    port.max_mtu_bytes = 4096;
    port.lid = static_cast<std::uint16_t>(1 + h * job.ranks_per_host + l);
    port.gids.push_back(topo::GidInfo{
        0, fmt::format("fe80::a088:c203:{:x}:{:x}", 0x100 + h, 0xa000 + l), "IB", ""});
    port.chosen_gid_index = 0;
    nic.ports.push_back(std::move(port));
    t.nics.push_back(std::move(nic));

    topo::Gpu gpu;
    gpu.pci_bus_id = fmt::format("0000:{:02x}:00.0", socket * 0x80 + (l % half) * 0x10 + 3);
    gpu.vendor_id = 0x10de;
    gpu.device_id = 0x2330;
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.os_devices = {fmt::format("cuda{}", l), fmt::format("nvml{}", l)};
    gpu.pcie_path = pcie(socket, l % half);
    gpu.numa_node = socket;
    gpu.pcie_link_gbyte_s = 63.0;
    t.gpus.push_back(std::move(gpu));
  }
  t.gpu_nic = topo::compute_gpu_nic_distances(t);
  return t;
}

measure::Stats stats_of(const std::vector<double>& samples) {
  return measure::summarize(std::span<const double>(samples.data(), samples.size()));
}

// All-reduce time of a ring-like algorithm over p ranks at 400 Gb/s with 3 us per step.
double model_time_us(std::uint64_t bytes, int p, std::size_t algorithm_index) {
  const auto algorithm = static_cast<double>(algorithm_index);
  const double steps =
      algorithm_index == 0 ? 2.0 * (p - 1) : 2.0 * std::log2(static_cast<double>(p));
  const double wire = 2.0 * (p - 1) / p * static_cast<double>(bytes) / 50e3;  // B / (B/us)
  return steps * (3.0 + 0.5 * static_cast<double>(algorithm)) + wire * (1.0 + 0.05 * algorithm);
}

void add_sweep(results::Document& d, const SyntheticJob& job, Noise& noise) {
  const int p = job.ranks();
  results::CollectiveParams params;
  params.collective = "allreduce";
  params.min_bytes = job.min_bytes;
  params.max_bytes = job.max_bytes;
  params.types = {"float"};
  params.ops = {"sum"};
  params.algorithms = job.algorithms;
  params.timeout_s = 60;
  params.mem = "cuda";
  params.mem_path = "direct";
  params.step_factor = 2;
  params.iters = job.iterations;
  params.warmup_iters = 5;
  d.collectives.params = params;
  for (std::size_t a = 0; a < job.algorithms.size(); ++a) {
    for (std::uint64_t bytes = job.min_bytes; bytes <= job.max_bytes; bytes *= 2) {
      measure::CollectiveRow r;
      r.algorithm = job.algorithms[a];
      r.op = ReduceOp::kSum;
      r.mem = memory::MemKind::kCuda;
      r.mem_path = memory::MemPath::kDirect;
      r.size_bytes = bytes;
      r.count = bytes / 4;
      r.ranks = p;
      const double base = model_time_us(bytes, p, a);
      for (int i = 0; i < job.iterations; ++i) {
        r.samples_us.push_back(base * (1.0 + 0.02 * noise.uniform()));
      }
      r.iteration_us = stats_of(r.samples_us);
      r.iteration_rank = static_cast<int>(noise.uniform() * p);
      r.time_us = r.iteration_us.mean;
      r.algbw_gbps = static_cast<double>(bytes) / r.time_us / 1e3;
      r.busbw_gbps = r.algbw_gbps * 2.0 * (p - 1) / p;
      r.wrong = 0;
      d.add_row(r);
    }
  }
}

void add_environment(results::Document& d, const SyntheticJob& job) {
  d.job.ranks = job.ranks();
  d.job.bootstrap = "tcp";
  for (int h = 0; h < job.hosts; ++h) {
    for (int l = 0; l < job.ranks_per_host; ++l) d.job.hosts.push_back(host_name(h));
    d.job.threads_per_host[host_name(h)] = 224;
  }
  d.environment.ucx_version = "1.17.0";
  d.environment.build = "Release";
  d.environment.ucx_env = std::map<std::string, std::string>{{"UCX_IB_SL", "1"}};
  d.environment.ibscope_env =
      std::map<std::string, std::string>{{"IBSCOPE_TOKEN", "(set; value not recorded)"}};
  d.environment.rails.emplace();
  for (int r = 0; r < job.ranks(); ++r) {
    const int l = r % job.ranks_per_host;
    const int socket = l / std::max(1, job.ranks_per_host / 2);
    d.environment.rails->push_back(
        results::RankRail{.rank = r,
                          .host = host_name(r / job.ranks_per_host),
                          .nic = fmt::format("mlx5_{}:1", l),
                          .netdev = fmt::format("ibp{}s0", 0x18 + l * 0x10),
                          .reason = "closest to the rank's GPU (PIX)",
                          .lane_nics = {fmt::format("mlx5_{}:1", l)},
                          .numa_node = socket,
                          .cpus = socket == 0 ? "0-55,112-167" : "56-111,168-223",
                          .binding = fmt::format("bound to NUMA node {}", socket)});
  }
  // n(n-1) ordered pairs: what job.cpp gathers (UCX lanes per pair), already grouped here, as a
  // map of 10^8 entries would not fit this generator's memory; see results/README.md.
  const auto n = static_cast<std::uint64_t>(job.ranks());
  const auto per_host = static_cast<std::uint64_t>(job.ranks_per_host);
  d.environment.transport_classes = std::vector<results::TransportClass>{
      {"0: cuda_ipc/cuda md[1] 1: sysv/memory md[2]", n * (per_host - 1), "0->1"},
      {"0: rc_mlx5/mlx5_0:1 md[4] 1: rc_mlx5/mlx5_0:1 md[4] rndv 8192", n * (n - per_host),
       fmt::format("0->{}", per_host)}};
}

void add_acceptance(results::Document& d, const SyntheticJob& job, Noise& noise) {
  results::Acceptance a;
  a.pass = true;
  a.thresholds = results::AcceptThresholds{0.8, 4, 0.02, 2, 1, 0.5, 0.1, 5};
  a.preflight = results::AcceptPreflight{true, true, "", 400, "InfiniBand", 4096, {}};
  const int n = job.ranks();
  const int per = job.ranks_per_host;
  // Rail-aligned: each rank's NIC to the same rail on the next host.
  for (int r = 0; r < n && job.hosts > 1; ++r) {
    const int peer = (r + per) % n;
    results::AcceptLink l;
    l.rank_a = std::min(r, peer);
    l.rank_b = std::max(r, peer);
    l.host_a = host_name(l.rank_a / per);
    l.host_b = host_name(l.rank_b / per);
    l.nic_a = fmt::format("mlx5_{}:1", l.rank_a % per);
    l.nic_b = fmt::format("mlx5_{}:1", l.rank_b % per);
    l.gbps_a_to_b = 48.5 + noise.uniform();
    l.gbps_b_to_a = 48.5 + noise.uniform();
    l.measured_gbps = std::min(l.gbps_a_to_b, l.gbps_b_to_a);
    l.expected_gbps = 48.9;
    l.line_rate_gbit = 425;
    l.link_kind = "InfiniBand NDR 4x";
    l.fraction_of_expected = l.measured_gbps / l.expected_gbps;
    l.peers_median_gbps = 49.0;
    l.latency_us = 2.1 + 0.2 * noise.uniform();
    l.peers_median_latency_us = 2.2;
    l.transports = "rc_mlx5";
    l.pass = true;
    a.links.push_back(std::move(l));
  }
  for (int h = 0; h < job.hosts; ++h) {
    a.hosts.push_back(results::AcceptHost{host_name(h), 2 * per, 0, false, true, ""});
    for (int l = 0; l < per; ++l) {
      a.nics.push_back(
          results::AcceptNic{host_name(h), fmt::format("mlx5_{}:1", l), 2, 0, false, true});
    }
  }
  a.median_gbps = 49.0;
  a.mad_gbps = 0.25;
  a.median_latency_us = 2.2;
  a.allreduce = results::AcceptAllreduce{static_cast<std::uint64_t>(job.straggler_rows), 0};
  results::Stragglers s;
  s.clock_uncertainty_us = 0.9;
  s.reason = "no rank was last in more than half of the iterations";
  for (int r = 0; r < n; ++r) {
    s.ranks.push_back(results::StragglerRank{r, host_name(r / per), job.straggler_iterations, 0, 0,
                                             1.5 * noise.uniform(), 0.01});
  }
  for (int row = 0; row < job.straggler_rows; ++row) {
    results::StragglerRow sr{"ring", 1ULL << (20 + 3 * row), false, {}, {}};
    for (int it = 0; it < job.straggler_iterations; ++it) {
      std::vector<double> per_rank(static_cast<std::size_t>(n));
      for (double& us : per_rank) us = 5.0 * noise.uniform();
      sr.arrival_us.push_back(std::move(per_rank));
    }
    s.rows.push_back(std::move(sr));
  }
  a.stragglers = std::move(s);
  d.acceptance = std::move(a);
}

void add_soak(results::Document& d, const SyntheticJob& job, Noise& noise) {
  results::Soak soak;
  soak.params.collective = "allreduce";
  soak.params.algorithms = {"ring"};
  soak.params.types = {"float"};
  soak.params.ops = {"sum"};
  soak.params.mem = "cuda";
  soak.params.mem_path = "direct";
  soak.params.sizes_bytes = {4096, 1ULL << 20};
  soak.params.duration_s = 60.0 * (job.soak_windows - 1);
  soak.params.window_s = 60;
  const auto n = static_cast<std::size_t>(job.ranks());
  std::vector<std::uint64_t> first;
  for (int w = 0; w < job.soak_windows; ++w) {
    measure::SoakWindow win;
    win.index = w;
    win.start_s = 60.0 * w;
    win.end_s = 60.0 * (w + 1);
    for (const std::uint64_t bytes : soak.params.sizes_bytes) {
      measure::SoakCaseWindow c{"ring", "float", "sum", bytes, 1000, {}, 0, 0, 0};
      std::vector<double> t;
      for (int i = 0; i < 50; ++i) t.push_back(model_time_us(bytes, job.ranks(), 0));
      c.time_us = stats_of(t);
      c.algbw_gbps = static_cast<double>(bytes) / c.time_us.mean / 1e3;
      c.busbw_gbps = c.algbw_gbps * 2.0;
      win.cases.push_back(c);
    }
    for (std::size_t r = 0; r < n; ++r) {
      win.rss_bytes.push_back((3ULL << 30) + static_cast<std::uint64_t>(noise.uniform() * 1e7));
    }
    if (w == 0) first = win.rss_bytes;
    soak.windows.push_back(std::move(win));
  }
  measure::SoakSummary sum;
  sum.windows = job.soak_windows;
  sum.steady_windows = job.soak_windows - 1;
  for (std::size_t r = 0; r < n; ++r) {
    sum.rss_growth_bytes.push_back(static_cast<std::int64_t>(soak.windows.back().rss_bytes[r]) -
                                   static_cast<std::int64_t>(first[r]));
  }
  sum.pass = true;
  soak.summary = std::move(sum);
  d.soak = std::move(soak);
}

}  // namespace

results::Document synthetic_results(const SyntheticJob& job) {
  results::Document d;
  d.tool.version = "0.0.0-synthetic";
  d.tool.git_sha = "0000000";
  d.tool.build_type = "Release";
  d.command = results::Command{"accept", {"ibscope", "accept", "--out", "results"}};
  d.started_utc = "2026-12-06T03:00:00Z";
  d.finished_utc = "2026-12-06T03:42:00Z";
  d.keep_rank_samples = job.keep_rank_samples;
  Noise noise(static_cast<std::uint64_t>(job.ranks()));
  add_environment(d, job);
  std::vector<topo::HostTopology> hosts;
  for (int h = 0; h < job.hosts; ++h) hosts.push_back(host_topology(job, h));
  d.topology = std::move(hosts);
  add_sweep(d, job, noise);
  add_acceptance(d, job, noise);
  add_soak(d, job, noise);
  return d;
}

}  // namespace ibscope::testing
