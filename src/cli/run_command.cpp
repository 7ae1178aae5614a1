#include "ibscope/cli/run_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "ibscope/accept/links_transport.hpp"
#include "ibscope/cli/cluster_flags.hpp"
#include "ibscope/cli/run_phases.hpp"
#include "ibscope/cli/sweep_bodies.hpp"
#include "ibscope/cli/training_report.hpp"
#include "ibscope/cli/workload_flags.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/job/topology_gather.hpp"
#include "ibscope/model/job_layout.hpp"
#include "ibscope/model/results_fits.hpp"
#include "ibscope/model/step_model.hpp"
#include "ibscope/model/what_if.hpp"
#include "ibscope/model/workload.hpp"
#include "ibscope/output/html_report.hpp"
#include "ibscope/output/topology_table.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::cli {
namespace {

void print_fits(std::FILE* out, const results::Document& doc, const std::string& source) {
  model::FitReport report;
  model::fit_results(doc, source, {}, report);
  for (const auto& c : report.curves) {
    if (c.key.collective != "allreduce" || c.key.in_place || c.fit.segments.empty()) continue;
    const auto& first = c.fit.segments.front();
    const auto& last = c.fit.segments.back();
    if (!first.link || !last.link) continue;
    const std::string bw = last.link->bw_eff_gbps > 0
                               ? fmt::format("{:.4g} GB/s", last.link->bw_eff_gbps)
                               : std::string("unresolved (time does not grow with size)");
    fmt::print(out,
               "# fit {:<5} {} ranks: per hop alpha {:.2f} us, bandwidth {} at the largest "
               "sizes, {} segment(s), worst residual {:.1f} %\n",
               c.key.algorithm, c.key.ranks, first.link->alpha_s * 1e6, bw, c.fit.segments.size(),
               c.fit.max_abs_residual_pct);
  }
  for (const auto& n : report.notes) fmt::print(out, "# fit note: {}\n", n);
}

// The training-step section for the default workload laid out as this job, its tiers fitted
// from the run's own results file.
output::TrainingReport run_training(const RunFlags& f, const results::Document& doc,
                                    const std::filesystem::path& file) {
  model::Workload w;
  try {
    w = model::lay_out_like_job(f.workload, doc.job.hosts);
  } catch (const UsageError& e) {
    output::TrainingReport t;
    t.workload = f.workload;
    t.missing = e.what();
    return t;
  }
  ClusterFlags cf;
  cf.fit_files = {file.string()};
  // What a single host can answer: its own links faster or slower.
  const char* what_ifs = w.nodes() > 1 ? kDefaultWhatIfs : "intra-bw=2,intra-bw=0.5,intra-lat=0.5";
  return training_report(w, cf, model::parse_what_ifs(what_ifs));
}

void print_share(std::FILE* out, const output::TrainingReport& t, const RunFlags& f,
                 const std::filesystem::path& file) {
  if (!t.breakdown) {
    fmt::print(out, "# network share: not computed: {}\n", t.missing);
    return;
  }
  fmt::print(out,
             "# network share: {:.1f} % of a {} training step laid out as this job ({}; the "
             "preset's compute), step {:.4g} s, with the links measured here\n",
             100 * t.breakdown->network_share, f.workload, t.layout, t.breakdown->step_s);
  fmt::print(out,
             "#   what other scales and fabrics would do: ibscope model --preset {} --fit "
             "{} --what-if ... (docs/model.md)\n",
             f.workload, file.string());
}

}  // namespace

std::vector<collectives::CollectiveSweepOptions> exchange_suite(
    const collectives::CollectiveSweepOptions& allreduce) {
  std::vector<collectives::CollectiveSweepOptions> out;
  for (Collective c : {Collective::kAlltoall, Collective::kAlltoallv}) {
    collectives::CollectiveSweepOptions o = allreduce;
    o.collective = c;
    o.sweep = measure::SweepSpec{};
    o.sweep.explicit_bytes = {4ULL << 10, 1ULL << 20};
    o.sweep.min_bytes = o.sweep.explicit_bytes.front();
    o.sweep.max_bytes = o.sweep.explicit_bytes.back();
    // Fewer calls than the all-reduce's: the suite's added time stays small on a loaded host.
    o.iters = std::min(o.iters, 10);
    o.warmup = std::min(o.warmup, 2);
    o.types = {DataType::kFloat32};
    o.ops = {ReduceOp::kSum};
    // One algorithm: no tuning table of its own, so the all-reduce's stays the run's.
    o.algorithms = {"pairwise"};
    o.skip_unavailable = false;
    o.tuning.reset();
    o.algorithm_options.chunk_bytes = 0;
    if (c == Collective::kAlltoallv) {
      o.counts = std::make_shared<const collectives::CountsSpec>(
          collectives::parse_counts_generator("zipf:1"));
    }
    out.push_back(std::move(o));
  }
  return out;
}

void add_run_flags(CLI::App& app, RunFlags& f) {
  struct SkipFlag {
    const char* name;
    bool RunFlags::*skip;
    const char* help;
  };
  static constexpr SkipFlag kSkipFlags[] = {
      {"--skip-topo", &RunFlags::skip_topo, "Do not record the hosts' topology"},
      {"--skip-p2p", &RunFlags::skip_p2p, "Do not measure the links between rank pairs"},
      {"--skip-allreduce", &RunFlags::skip_allreduce, "Do not run the all-reduce sweep"},
      {"--skip-alltoall", &RunFlags::skip_alltoall,
       "Do not run the small all-to-all and all-to-all-v sweeps (4K and 1M per rank, pairwise; "
       "alltoallv with --counts zipf:1)"},
      {"--skip-loopback", &RunFlags::skip_loopback,
       "Do not measure each NIC's loopback (RDMA WRITE and READ to itself, 5 s per host; "
       "skipped anyway where no host has an ACTIVE RDMA port)"},
      {"--skip-patterns", &RunFlags::skip_patterns,
       "Do not run the incast between hosts (incast:K, K = min(hosts - 1, 4), onto 2 hubs, "
       "256 KiB flows; skipped anyway on one host)"},
      {"--skip-congestion", &RunFlags::skip_congestion,
       "Do not run the congestion test (victims' latency and all-reduce alone and under an "
       "incast congestor; skipped anyway on one host and below 2 victim and 2 congestor "
       "ranks)"},
      {"--skip-model", &RunFlags::skip_model, "Do not print fits and the network's share"},
      {"--skip-report", &RunFlags::skip_report,
       "Do not write the HTML report next to the results file"},
  };
  for (const SkipFlag& s : kSkipFlags) app.add_flag(s.name, f.*(s.skip), s.help);
  app.add_option("--links", f.links,
                 "What measures the links: verbs probes (write_lat, write_bw), ucx (p2p "
                 "latency, bw, bibw), or auto (verbs where every host has an ACTIVE RDMA port)")
      ->check(CLI::IsMember({"auto", "ucx", "verbs"}))
      ->capture_default_str();
  app.add_option("--workload", f.workload,
                 "Preset whose training step the network's share is computed for (ibscope "
                 "model --help lists them)")
      ->capture_default_str();
}

int run_body(job::JobContext& ctx, const RunPlan& plan) {
  const RunFlags& f = plan.flags;
  std::vector<topo::HostTopology> hosts;
  if (!f.skip_topo || (!f.skip_p2p && f.links == "auto") || !f.skip_patterns || !f.skip_congestion)
    hosts = job::gather_topology(ctx.bootstrap);
  if (!f.skip_topo) {
    if (ctx.results != nullptr) ctx.results->topology = hosts;
    if (ctx.table_out != nullptr) output::print_topology(ctx.table_out, hosts);
  }
  if (!f.skip_loopback) run_suite_loopback(ctx);
  int status = 0;
  if (!f.skip_p2p && ctx.comm().size() >= 2) {
    // --links auto: rank 0 judges the topology and decides for every rank, as accept does.
    const accept::AcceptTransport requested = accept::parse_accept_transport(f.links);
    const accept::Preflight pre =
        requested == accept::AcceptTransport::kAuto
            ? accept::agree_on_preflight(ctx.bootstrap, hosts, "links over verbs")
            : accept::Preflight{};
    if (accept::links_transport(requested, pre) == accept::AcceptTransport::kVerbs) {
      for (const char* test : {"write_lat", "write_bw"}) {
        ProbeFlags probe;
        probe.test = test;
        status = std::max(status, probe_body(ctx, probe));
      }
    } else {
      if (ctx.results != nullptr) ctx.results->p2p.params = params_of(plan.p2p);
      status = std::max(status, p2p_body(ctx, plan.p2p));
    }
  }
  if (!f.skip_allreduce) {
    if (ctx.results != nullptr) ctx.results->collectives.params = params_of(plan.allreduce);
    status = std::max(status, collective_body(ctx, plan.allreduce));
  }
  // The collectives section's params stay the all-reduce's; these rows name their collective.
  for (const auto& o : plan.exchanges) status = std::max(status, collective_body(ctx, o));
  run_suite_patterns_and_congestion(
      ctx, hosts, RunPhaseFlags{!f.skip_loopback, !f.skip_patterns, !f.skip_congestion});
  return status;
}

void analyse_run(const std::filesystem::path& file, const RunFlags& f, bool table) {
  std::FILE* out = table ? stdout : stderr;
  results::Document doc;
  try {
    doc = results::load(file);
  } catch (const Error& e) {
    fmt::print(out, "# fits, model and report: not done: {}\n", e.what());
    return;
  }
  std::optional<output::TrainingReport> training;
  if (!f.skip_model) {
    try {
      if (table) print_fits(out, doc, file.string());
      training = run_training(f, doc, file);
      if (table) print_share(out, *training, f, file);
    } catch (const Error& e) {
      fmt::print(out, "# model: not computed: {}\n", e.what());
    }
  }
  if (f.skip_report) return;
  try {
    std::filesystem::path page = file;
    page.replace_extension(".html");
    output::ReportOptions o;
    o.title = fmt::format("ibscope run {}", file.stem().string());
    o.training = training;
    o.command_line = fmt::format("ibscope report {}{}", file.string(),
                                 f.skip_model ? "" : fmt::format(" --preset {}", f.workload));
    write_file_exclusive(page,
                         output::html_report({{file.string(), file.stem().string(), doc}}, o));
    fmt::print(out, "# report: {}\n", page.string());
  } catch (const Error& e) {
    fmt::print(out, "# report: not written: {}\n", e.what());
  }
}

}  // namespace ibscope::cli
