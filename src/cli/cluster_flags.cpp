#include "ibscope/cli/cluster_flags.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/model/link_fit.hpp"
#include "ibscope/model/results_fits.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::cli {
namespace {

using model::CollectivePoint;
using model::MeasuredTier;

model::Tier fitted_tier(const std::vector<CollectivePoint>& pts, const std::string& algorithm,
                        const std::vector<std::string>& files,
                        Collective coll = Collective::kAllreduce) {
  const model::LinkFit fit = model::fit_link(coll, algorithm, pts);
  const auto prose = collectives::descriptor_of(coll).prose;
  if (!(fit.link.beta_s_per_byte > 0)) {
    throw UsageError(
        fmt::format("the {} {} rows of {} give no bandwidth (the time "
                    "does not grow with size); measure larger sizes",
                    algorithm, prose, fmt::join(files, ", ")));
  }
  model::Tier t;
  t.latency_s = fit.link.alpha_s;
  t.bw_gbps = 1 / (fit.link.beta_s_per_byte * units::kBytesPerGB);
  t.source = fmt::format(
      "fitted: {} {}, {} points at {} ranks, r2 {:.4f}, worst "
      "residual {:.1f} %{} ({})",
      algorithm, coll == Collective::kAllreduce ? "all-reduce" : "all-to-all", fit.points,
      fmt::join(fit.rank_counts, ","), fit.r2, 100 * fit.max_abs_residual_fraction,
      fit.gamma_folded ? ", reduction folded into bandwidth" : "", fmt::join(files, ", "));
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return measure::percentile_sorted(v, 50);
}

// Without collective rows, a tier comes from the per-link fits of p2p or verbs rows (model/
// results_fits.hpp): the median latency intercept of the latency tests and the median
// large-size bandwidth of the one-way bandwidth tests over the tier's links.
bool tier_from_links(const model::FitReport& report, bool inter, model::Tier& t) {
  std::vector<double> lat_us, bw_gbps;
  std::set<std::string> sources;
  for (const auto& l : report.links) {
    if ((l.host_a != l.host_b) != inter) continue;
    const bool latency = l.test == "latency" || l.test == "write_lat" || l.test == "send_lat";
    const bool bandwidth = l.test == "bw" || l.test == "write_bw" || l.test == "send_bw";
    if (latency) lat_us.push_back(l.alpha_us);
    if (bandwidth && l.bw_gbps > 0) bw_gbps.push_back(l.bw_gbps);
    if (latency || (bandwidth && l.bw_gbps > 0)) sources.insert(l.source);
  }
  if (bw_gbps.empty()) return false;
  t.bw_gbps = median(bw_gbps);
  t.latency_s = lat_us.empty() ? 0 : median(lat_us) * 1e-6;
  t.source = fmt::format(
      "fitted: median of {} link bandwidth fit(s) and {} latency fit(s) of "
      "p2p/verbs rows, no all-reduce rows ({})",
      bw_gbps.size(), lat_us.size(), fmt::join(sources, ", "));
  return true;
}

// All-to-all tiers (model/network.hpp, ClusterNetwork::alltoall_*) from the files' all-to-all
// rows of the modelled algorithm (or the one a two-tier algorithm's tiers are fitted by).
void fit_alltoall_tiers(const ClusterFlags& f, const std::vector<results::Document>& docs,
                        model::ClusterNetwork& c) {
  std::string algorithm = model::algorithm_of(c, Collective::kAlltoall);
  const auto& info = collectives::find_algorithm(Collective::kAlltoall, algorithm);
  if (!info.caps.tiers_fitted_by.empty()) algorithm = info.caps.tiers_fitted_by;
  std::vector<CollectivePoint> inter_pts, intra_pts;
  std::vector<std::string> inter_files, intra_files;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const auto pts = model::collective_points(docs[i], Collective::kAlltoall, algorithm);
    if (pts.empty()) continue;
    const MeasuredTier tier = model::measured_tier(docs[i]);
    if (tier == MeasuredTier::kMixed) continue;  // reported by the all-reduce fit's rules
    auto& into = tier == MeasuredTier::kInter ? inter_pts : intra_pts;
    into.insert(into.end(), pts.begin(), pts.end());
    (tier == MeasuredTier::kInter ? inter_files : intra_files).push_back(f.fit_files.at(i));
  }
  // A refused fit leaves that tier's all-to-alls unpriced, with the reason, rather than
  // failing every other answer of the model.
  const auto fit = [&](const std::vector<CollectivePoint>& pts,
                       const std::vector<std::string>& files, std::optional<model::Tier>& into,
                       std::string& not_fitted) {
    if (pts.empty()) return;
    try {
      into = fitted_tier(pts, algorithm, files, Collective::kAlltoall);
    } catch (const UsageError& e) {
      not_fitted = fmt::format("{}: {}", fmt::join(files, ", "), e.what());
    }
  };
  fit(inter_pts, inter_files, c.alltoall_inter, c.alltoall_inter_not_fitted);
  fit(intra_pts, intra_files, c.alltoall_intra, c.alltoall_intra_not_fitted);
}

void apply_given(model::Tier& t, double lat_us, double bw_gbps, const char* tier_flag) {
  if (lat_us >= 0) t.latency_s = lat_us * 1e-6;
  if (bw_gbps >= 0) t.bw_gbps = bw_gbps;
  if (lat_us >= 0 || bw_gbps >= 0) {
    t.source = t.source.empty() ? fmt::format("given: --{}-*", tier_flag)
                                : fmt::format("{}; overridden by --{}-*", t.source, tier_flag);
  }
}

// The ibscope all-reduce algorithm whose formula NCCL's `name` follows: its own name or NCCL's
// (NCCL_ALGO Ring or Tree: NCCL's tree is a double binary tree, ibscope's dbt).
std::string nccl_algorithm_formula(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (lower == "tree") return "dbt";
  for (const auto& a : collectives::algorithms_for(Collective::kAllreduce)) {
    if (a.name == lower && !a.caps.nccl_name.empty()) return std::string(a.name);
  }
  throw UsageError(fmt::format(
      "--nccl-algorithm {}: give the algorithm NCCL ran (NCCL_ALGO): ring or tree", name));
}

// nccl-tests rows fit `formula`'s tiers: NCCL's rings and trees cross hosts on each rank's own
// NIC, so a run on several hosts gives the inter-node tier, one on one host the intra-node tier.
MeasuredTier nccl_tier(const results::Document& doc, const std::string& file) {
  const std::set<std::string> hosts(doc.job.hosts.begin(), doc.job.hosts.end());
  if (hosts.empty()) {
    throw UsageError(fmt::format(
        "--fit {}: this nccl-tests output does not say its hosts (no '#  Rank ... on HOST' "
        "lines), so its tier (inter- or intra-node) is unknown",
        file));
  }
  return hosts.size() > 1 ? MeasuredTier::kInter : MeasuredTier::kIntra;
}

}  // namespace

void add_cluster_flags(CLI::App& app, ClusterFlags& f) {
  app.add_option("--fit", f.fit_files,
                 "Results files to fit the network tiers from: runs with one rank per host give "
                 "the inter-node tier, runs on one host the intra-node tier")
      ->check(CLI::ExistingFile);
  app.add_option("--nodes", f.nodes, "Nodes of the cluster to model")->check(CLI::PositiveNumber);
  app.add_option("--gpus-per-node", f.gpus_per_node, "Ranks (GPUs) per node")
      ->check(CLI::PositiveNumber);
  app.add_option("--inter-lat-us", f.inter_lat_us,
                 "Inter-node latency per message, us (overrides the fitted one)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--inter-bw-gbps", f.inter_bw_gbps,
                 "Inter-node payload bandwidth per NIC and direction, GB/s (1e9 B/s; e.g. ~48 for "
                 "NDR 400 Gb/s)")
      ->check(CLI::PositiveNumber);
  app.add_option("--inter-links", f.inter_links, "NICs (inter-node links) per node")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--intra-lat-us", f.intra_lat_us, "Intra-node latency per message, us")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--intra-bw-gbps", f.intra_bw_gbps,
                 "Intra-node bandwidth per rank and direction, GB/s (e.g. 450 for NVLink 4)")
      ->check(CLI::PositiveNumber);
  app.add_option("--reduce-gbps", f.reduce_gbps,
                 "Reduction rate, GB/s of input reduced (gamma = 1/rate); 0: no separate "
                 "reduction term (fits from ring all-reduce fold it into the bandwidth)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--nccl-algorithm", f.nccl_algorithm,
                 "The all-reduce algorithm NCCL ran in the --fit nccl-tests outputs (NCCL_ALGO "
                 "when measured: ring or tree): their rows then fit that formula's tiers (a run "
                 "on several hosts the inter-node tier, on one host the intra-node tier); "
                 "without it nccl-tests rows fit no tier (docs/nccl-tests.md)");
  for (const auto& d : collectives::descriptors()) {
    if (!d.in_training_model) continue;
    std::string flag = fmt::format("--{}-algo", d.name);
    std::replace(flag.begin(), flag.end(), '_', '-');
    std::string& algorithm = f.algorithms[d.id];
    if (algorithm.empty()) algorithm = collectives::algorithms_for(d.id).front().name;
    app.add_option(flag, algorithm, fmt::format("{} algorithm to model", d.prose))
        ->capture_default_str();
  }
}

void apply_nccl_algorithm(const ClusterFlags& f, std::vector<results::Document>& docs) {
  if (f.nccl_algorithm.empty()) return;
  const std::string formula = nccl_algorithm_formula(f.nccl_algorithm);
  for (auto& doc : docs) {
    if (doc.tool.name != "nccl-tests") continue;
    for (auto& row : doc.collectives.rows) {
      if (row.algorithm == "nccl") row.algorithm = formula;
    }
  }
}

model::ClusterNetwork to_cluster(const ClusterFlags& f, const std::string& fit_algorithm) {
  std::vector<results::Document> docs;
  for (const auto& file : f.fit_files) docs.push_back(results::load(file));
  return to_cluster(f, docs, fit_algorithm);
}

model::ClusterNetwork to_cluster(const ClusterFlags& f, const std::vector<results::Document>& docs,
                                 const std::string& fit_algorithm) {
  model::ClusterNetwork c;
  c.nodes = f.nodes > 0 ? f.nodes : 1;
  c.gpus_per_node = f.gpus_per_node > 0 ? f.gpus_per_node : 1;
  for (const auto& [coll, name] : f.algorithms) model::algorithm_of(c, coll) = name;
  std::string algorithm =
      fit_algorithm.empty() ? model::algorithm_of(c, Collective::kAllreduce) : fit_algorithm;
  // An algorithm over two tiers (hier) composes them (docs/model.md, "Tiers"): each tier is
  // fitted from the files' rows of the one-tier algorithm it names (ring), whose formula is
  // what its rail rings and the tiers share. Unknown names fail before any file.
  const auto& fitted = collectives::find_algorithm(Collective::kAllreduce, algorithm);
  if (!fitted.caps.tiers_fitted_by.empty()) algorithm = fitted.caps.tiers_fitted_by;

  const std::string nccl_formula =
      f.nccl_algorithm.empty() ? std::string() : nccl_algorithm_formula(f.nccl_algorithm);
  std::vector<CollectivePoint> inter_pts, intra_pts;
  std::vector<std::string> inter_files, intra_files;
  model::FitReport link_fits;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const auto& file = f.fit_files.at(i);
    const auto& doc = docs[i];
    const bool nccl = doc.tool.name == "nccl-tests";
    auto pts = model::collective_points(doc, Collective::kAllreduce, algorithm);
    if (nccl && nccl_formula == algorithm) {  // rows not yet renamed by apply_nccl_algorithm
      const auto more = model::collective_points(doc, Collective::kAllreduce, "nccl");
      pts.insert(pts.end(), more.begin(), more.end());
    }
    if (pts.empty()) {
      model::fit_results(doc, file, {}, link_fits);
      continue;
    }
    switch (nccl ? nccl_tier(doc, file) : model::measured_tier(doc)) {
      case MeasuredTier::kInter:
        inter_pts.insert(inter_pts.end(), pts.begin(), pts.end());
        inter_files.push_back(file);
        break;
      case MeasuredTier::kIntra:
        intra_pts.insert(intra_pts.end(), pts.begin(), pts.end());
        intra_files.push_back(file);
        break;
      case MeasuredTier::kMixed:
        throw UsageError(fmt::format(
            "--fit {}: its ranks share some hosts but not all, so its times mix the two tiers; "
            "fit from runs with one rank per host (inter-node) or all ranks on one host",
            file));
    }
  }
  fit_alltoall_tiers(f, docs, c);
  bool have_inter = !inter_pts.empty(), have_intra = !intra_pts.empty();
  if (have_inter) c.inter = fitted_tier(inter_pts, algorithm, inter_files);
  if (have_intra) c.intra = fitted_tier(intra_pts, algorithm, intra_files);
  if (!have_inter) have_inter = tier_from_links(link_fits, true, c.inter);
  if (!have_intra) have_intra = tier_from_links(link_fits, false, c.intra);
  const bool have_alltoall = c.alltoall_inter || c.alltoall_intra ||
                             !c.alltoall_intra_not_fitted.empty() ||
                             !c.alltoall_inter_not_fitted.empty();
  if (!f.fit_files.empty() && !have_inter && !have_intra && !have_alltoall) {
    // nccl-tests output loads (docs/nccl-tests.md), but NCCL does not print which algorithm
    // ran, so its rows cannot stand for a formula's tier.
    const bool nccl = std::any_of(docs.begin(), docs.end(),
                                  [](const auto& d) { return d.tool.name == "nccl-tests"; });
    throw UsageError(
        fmt::format("--fit: no {} all-reduce rows without errors and no p2p or "
                    "verbs bandwidth rows in {}; measure with 'ibscope allreduce "
                    "-A {}' or 'ibscope p2p'{}",
                    algorithm, fmt::join(f.fit_files, ", "), algorithm,
                    !nccl ? std::string()
                    : nccl_formula.empty()
                        ? std::string(" (nccl-tests rows are algorithm 'nccl': NCCL does not say "
                                      "which algorithm ran; give it with --nccl-algorithm ring or "
                                      "tree to fit the tiers from them)")
                        : fmt::format(" (the nccl-tests rows stand for {} "
                                      "(--nccl-algorithm {}); fit with --allreduce-algo {})",
                                      nccl_formula, f.nccl_algorithm, nccl_formula)));
  }
  c.inter.links_per_node = f.inter_links;
  if (c.alltoall_inter) c.alltoall_inter->links_per_node = f.inter_links;
  apply_given(c.inter, f.inter_lat_us, f.inter_bw_gbps, "inter");
  apply_given(c.intra, f.intra_lat_us, f.intra_bw_gbps, "intra");
  if (f.reduce_gbps > 0) c.gamma_s_per_byte = 1 / (f.reduce_gbps * units::kBytesPerGB);
  return c;
}

}  // namespace ibscope::cli
