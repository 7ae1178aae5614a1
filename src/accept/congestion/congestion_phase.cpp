#include "ibscope/accept/congestion_phase.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "congestor_traffic.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/transport/comm.hpp"
#include "victim_window.hpp"

namespace ibscope::accept {
namespace {

// What one rank saw in one window, flattened for the gather to rank 0:
// [n_lat, lat..., n_iter, iter..., rounds, bytes_received, seconds].
void pack(std::vector<double>& out, const congestion::VictimWindow& v,
          const congestion::CongestorLoad& c) {
  out.push_back(static_cast<double>(v.half_rtt_us.size()));
  out.insert(out.end(), v.half_rtt_us.begin(), v.half_rtt_us.end());
  out.push_back(static_cast<double>(v.iteration_us.size()));
  out.insert(out.end(), v.iteration_us.begin(), v.iteration_us.end());
  out.push_back(static_cast<double>(c.rounds));
  out.push_back(static_cast<double>(c.bytes_received));
  out.push_back(c.seconds);
}

struct Window {
  std::vector<double> half_rtt_us;
  std::vector<std::vector<double>> iteration_us;  // per victim
  std::uint64_t rounds = 0;
  double bytes_received = 0, seconds = 0;
};

// Reads `windows` windows of one rank's packed figures into `into`.
void unpack(const bootstrap::Bytes& blob, int rank, std::vector<Window>& into) {
  std::vector<double> v(blob.size() / sizeof(double));
  if (!v.empty()) std::memcpy(v.data(), blob.data(), v.size() * sizeof(double));
  std::size_t at = 0;
  auto take = [&](const char* what) {
    if (at >= v.size()) {
      throw RemoteError(
          fmt::format("accept congestion: rank {} sent malformed figures ({})", rank, what));
    }
    return v[at++];
  };
  auto take_n = [&](std::vector<double>& out, const char* what) {
    const double n = take(what);
    if (!(n >= 0) || n > static_cast<double>(v.size() - at)) {
      throw RemoteError(
          fmt::format("accept congestion: rank {} sent malformed figures ({})", rank, what));
    }
    for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) out.push_back(v[at++]);
  };
  for (Window& w : into) {
    take_n(w.half_rtt_us, "latency");
    std::vector<double> it;
    take_n(it, "all-reduce");
    if (!it.empty()) w.iteration_us.push_back(std::move(it));
    w.rounds = std::max(w.rounds, static_cast<std::uint64_t>(take("rounds")));
    w.bytes_received += take("bytes");
    w.seconds = std::max(w.seconds, take("seconds"));
  }
}

}  // namespace

CongestionResult run_congestion_phase(transport::Comm& comm,
                                      const std::vector<std::string>& host_of_rank,
                                      const CongestionPhaseSpec& spec,
                                      const std::function<void(std::string_view)>& phase) {
  const CongestionOptions& o = spec.options;
  validate(o);
  bootstrap::Bootstrap& boot = comm.bootstrap();
  const CongestionSplit split = split_victims(host_of_rank, o.victim_fraction, o.victim_ranks);
  const int me = comm.rank();
  const bool victim =
      std::find(split.victims.begin(), split.victims.end(), me) != split.victims.end();
  const congestion::VictimSpec vs{spec.latency_bytes,   spec.latency_iters, o.allreduce_bytes,
                                  spec.allreduce_iters, spec.warmup,        spec.timeout_s};
  auto tell = [&](const std::string& what) {
    if (phase && me == 0) phase(what);
  };
  tell(fmt::format(
      "congestion: {} victim rank(s) on {} host(s) ({} ping-pong pair(s)), {} congestor rank(s) "
      "on {} host(s){}",
      split.victims.size(), split.victim_hosts, split.victim_pairs.size(), split.congestors.size(),
      split.congestor_hosts, split.by_host ? "" : ", split by rank"));

  std::vector<double> mine;
  // Isolated: the congestors stay quiet.
  tell("congestion: victims isolated");
  boot.barrier("accept congestion: isolated window");
  pack(mine, victim ? congestion::run_victim(comm, split, vs, -1) : congestion::VictimWindow{}, {});
  boot.barrier("accept congestion: end of the isolated window");
  for (const CongestorPattern p : o.congestors) {
    tell(fmt::format("congestion: victims under {} congestors ({} B messages)", name_of(p),
                     o.congestor_bytes));
    boot.barrier(fmt::format("accept congestion: {} window", name_of(p)));
    if (victim) {
      pack(mine, congestion::run_victim(comm, split, vs, split.congestors.front()), {});
    } else {
      // The victims' window is bounded by their timeout; the stop may take one more round.
      pack(mine, {},
           congestion::run_congestor(comm, p, split.congestors, split.victims, o.congestor_bytes,
                                     spec.timeout_s, 2 * spec.timeout_s + 10));
    }
    boot.barrier(fmt::format("accept congestion: end of the {} window", name_of(p)));
  }
  // The victims' all-reduces drew operation sequence numbers; the congestors draw as many, so
  // every rank agrees on the next collective's tags again.
  if (!victim) {
    const std::size_t windows = 1 + o.congestors.size();
    for (std::size_t k = 0;
         k < windows * static_cast<std::size_t>(spec.warmup + spec.allreduce_iters); ++k) {
      (void)comm.next_op_seq();
    }
  }

  const auto blobs = boot.gather(
      std::span(reinterpret_cast<const std::byte*>(mine.data()), mine.size() * sizeof(double)),
      "accept congestion: figures");
  CongestionResult result;
  if (me != 0) return result;
  std::vector<Window> windows(1 + o.congestors.size());
  for (std::size_t r = 0; r < blobs.size(); ++r) unpack(blobs[r], static_cast<int>(r), windows);

  results::AcceptCongestion& s = result.section;
  s.by_host = split.by_host;
  s.victim_ranks = split.victims;
  for (const int v : split.victims) {
    const std::string& h = host_of_rank[static_cast<std::size_t>(v)];
    if (std::find(s.victim_hosts.begin(), s.victim_hosts.end(), h) == s.victim_hosts.end()) {
      s.victim_hosts.push_back(h);
    }
  }
  s.congestor_ranks = static_cast<int>(split.congestors.size());
  s.congestor_hosts = split.congestor_hosts;
  s.victim_pairs = static_cast<int>(split.victim_pairs.size());
  s.latency_bytes = spec.latency_bytes;
  s.allreduce_bytes = o.allreduce_bytes;
  s.congestor_bytes = o.congestor_bytes;
  s.latency_iters = spec.latency_iters;
  s.allreduce_iters = spec.allreduce_iters;
  s.max_impact = o.max_impact;
  s.max_tail_impact = o.max_tail_impact;
  const VictimFigures isolated =
      victim_figures(windows[0].half_rtt_us, windows[0].iteration_us, o.allreduce_bytes);
  s.pass = true;
  for (std::size_t k = 0; k < o.congestors.size(); ++k) {
    const Window& w = windows[k + 1];
    const std::string name(name_of(o.congestors[k]));
    const VictimFigures congested =
        victim_figures(w.half_rtt_us, w.iteration_us, o.allreduce_bytes);
    for (const ImpactRow& r : judge_impact(name, isolated, congested, o)) {
      s.impacts.push_back(results::CongestionImpact{r.congestor, r.metric, r.isolated, r.congested,
                                                    r.impact, r.max_impact, r.tail, r.pass});
      if (!r.pass) {
        s.pass = false;
        result.failures.push_back(fmt::format(
            "congestion: {} under {} congestors: {:.4g} alone, {:.4g} congested, impact "
            "{:.2f} > {:.2f} (--max-congestion-{}impact)",
            r.metric, name, r.isolated, r.congested, r.impact, r.max_impact,
            r.tail ? "tail-" : ""));
      }
    }
    s.loads.push_back(results::CongestionLoad{
        name, w.rounds, w.seconds, w.seconds > 0 ? w.bytes_received / w.seconds / 1e9 : 0.0});
  }
  return result;
}

}  // namespace ibscope::accept
