#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "ibscope/cli/cluster_flags.hpp"
#include "ibscope/cli/flags.hpp"
#include "ibscope/cli/offline_commands.hpp"
#include "ibscope/core/atomic_file.hpp"
#include "ibscope/core/error.hpp"
#include "ibscope/core/units.hpp"
#include "ibscope/measure/stats.hpp"
#include "ibscope/model/documents.hpp"
#include "ibscope/model/link_fit.hpp"
#include "ibscope/results/loader.hpp"

namespace ibscope::cli {
namespace {

struct PredictFlags {
  ClusterFlags cluster;
  std::string collective = "allreduce";
  std::string algorithms;  // empty: the cluster's algorithm for the collective
  std::string sizes = "64K,1M,16M,256M";
  std::vector<std::string> compare_files;
  double tolerance_pct = -1;
  std::string json_out;
};

struct PredictRow {
  std::string algorithm;
  std::uint64_t size_bytes = 0;
  double predicted_s = 0;
  double measured_s = -1;  // < 0: nothing to compare with
};

Collective parse_collective(const std::string& name) {
  if (const auto c = collective_named(name)) return *c;
  throw UsageError(fmt::format("-c/--collective: unknown collective '{}' ({})", name,
                               collectives::collective_names(", ")));
}

bool files_have_allreduce_rows(const std::vector<results::Document>& docs, const std::string& a) {
  return std::any_of(docs.begin(), docs.end(), [&](const results::Document& d) {
    return !model::collective_points(d, Collective::kAllreduce, a).empty();
  });
}

// The median of the matching rows' median times (in-place and out-of-place rows both count).
double measured_s(const std::vector<results::Document>& docs, Collective c,
                  const std::string& algorithm, std::uint64_t size, int ranks) {
  std::vector<double> times;
  for (const auto& d : docs) {
    for (const auto& pt : model::collective_points(d, c, algorithm)) {
      if (pt.ranks == ranks && pt.bytes == static_cast<double>(size)) times.push_back(pt.time_s);
    }
  }
  if (times.empty()) return -1;
  std::sort(times.begin(), times.end());
  return measure::percentile_sorted(times, 50);
}

std::string describe(const model::Tier& t, const char* name, bool used) {
  if (!used) return fmt::format("# {} tier: not crossed by this layout\n", name);
  return fmt::format(
      "# {} tier: latency {:.2f} us, {:.4g} GB/s per link, {} link(s) per node"
      " ({})\n",
      name, t.latency_s * 1e6, t.bw_gbps, t.links_per_node,
      t.source.empty() ? "not given" : t.source);
}

int run_predict(const PredictFlags& f) {
  const Collective coll = parse_collective(f.collective);
  const int nodes = f.cluster.nodes > 0 ? f.cluster.nodes : 1;
  const int per_node = f.cluster.gpus_per_node > 0 ? f.cluster.gpus_per_node : 1;
  const int ranks = nodes * per_node;
  if (ranks < 2) {
    throw UsageError(
        "predict: give the layout to predict with --nodes and/or --gpus-per-node "
        "(at least 2 ranks in all)");
  }
  std::vector<std::uint64_t> sizes;
  for (const auto& s : split_list(f.sizes)) sizes.push_back(units::parse_size_bytes(s, "--sizes"));
  std::vector<results::Document> fit_docs, compare_docs;
  for (const auto& file : f.cluster.fit_files) fit_docs.push_back(results::load(file));
  for (const auto& file : f.compare_files) compare_docs.push_back(results::load(file));
  apply_nccl_algorithm(f.cluster, fit_docs);
  apply_nccl_algorithm(f.cluster, compare_docs);

  model::ClusterNetwork base = to_cluster(f.cluster, fit_docs);
  std::vector<std::string> algorithms =
      f.algorithms.empty() ? std::vector<std::string>{model::algorithm_of(base, coll)}
                           : split_list(f.algorithms);
  const model::Group group{ranks, per_node, 1};
  std::vector<PredictRow> rows;
  std::string tiers_text, last_tiers;
  std::vector<model::PredictedTiers> tiers;
  for (const auto& a : algorithms) {
    collectives::find_algorithm(coll, a);
    // An all-reduce algorithm measured in the --fit files is best predicted through its own
    // cost formula; anything else uses the tiers fitted through --allreduce-algo.
    const bool own_fit = coll == Collective::kAllreduce && !fit_docs.empty() &&
                         files_have_allreduce_rows(fit_docs, a);
    model::ClusterNetwork cluster = own_fit ? to_cluster(f.cluster, fit_docs, a) : base;
    model::algorithm_of(cluster, coll) = a;
    const auto network = model::make_network_model(cluster);
    // Print the tiers once, and again only for an algorithm fitted to tiers of its own.
    std::string text = describe(cluster.inter, "inter-node", nodes > 1) +
                       describe(cluster.intra, "intra-node", per_node > 1);
    if (text != last_tiers) {
      tiers_text += fmt::format("# {} on {} node(s) x {} rank(s), tiers for {}:\n", name_of(coll),
                                nodes, per_node, a) +
                    text;
      last_tiers = std::move(text);
    }
    tiers.push_back({a, cluster.inter, cluster.intra, cluster.gamma_s_per_byte});
    for (auto size : sizes) {
      PredictRow r{a, size, network->collective_s(coll, static_cast<double>(size), group)};
      r.measured_s = measured_s(compare_docs, coll, a, size, ranks);
      rows.push_back(r);
    }
  }

  fmt::print("{}", tiers_text);
  const bool comparing = !compare_docs.empty();
  fmt::print("# {:>12} {:>10} {:>6} {:>6} {:>14} {:>12} {:>12}{}\n", "size(B)", "algo", "ranks",
             "nodes", "predicted(us)", "algbw(GB/s)", "busbw(GB/s)",
             comparing ? fmt::format(" {:>13} {:>9}", "measured(us)", "error(%)") : "");
  std::vector<model::PredictedRow> out_rows;
  int outside = 0, compared = 0;
  double worst_pct = 0;
  for (const auto& r : rows) {
    const double algbw = units::to_gb_per_s(static_cast<double>(r.size_bytes), r.predicted_s);
    const double busbw = algbw * busbw_factor(coll, ranks);
    model::PredictedRow jr{.collective = std::string(name_of(coll)),
                           .algorithm = r.algorithm,
                           .size_bytes = r.size_bytes,
                           .ranks = ranks,
                           .nodes = nodes,
                           .predicted_us = r.predicted_s * 1e6,
                           .algbw_gbps = algbw,
                           .busbw_gbps = busbw,
                           .measured_us = std::nullopt,
                           .error_pct = std::nullopt};
    std::string cmp;
    if (comparing) {
      if (r.measured_s > 0) {
        const double err = 100 * (r.predicted_s - r.measured_s) / r.measured_s;
        ++compared;
        worst_pct = std::max(worst_pct, std::abs(err));
        if (f.tolerance_pct >= 0 && std::abs(err) > f.tolerance_pct) ++outside;
        jr.measured_us = r.measured_s * 1e6;
        jr.error_pct = err;
        cmp = fmt::format(" {:>13.2f} {:>+9.1f}", r.measured_s * 1e6, err);
      } else {
        cmp = fmt::format(" {:>13} {:>9}", "-", "-");
      }
    }
    fmt::print("  {:>12} {:>10} {:>6} {:>6} {:>14.2f} {:>12.4f} {:>12.4f}{}\n", r.size_bytes,
               r.algorithm, ranks, nodes, r.predicted_s * 1e6, algbw, busbw, cmp);
    out_rows.push_back(jr);
  }
  if (comparing) {
    fmt::print(
        "# compared with measurements: {} of {} rows, worst |error| {:.1f} %{}\n", compared,
        rows.size(), worst_pct,
        f.tolerance_pct >= 0 ? fmt::format(", {} outside +-{} %", outside, f.tolerance_pct) : "");
    if (compared == 0) {
      throw UsageError(
          fmt::format("--compare: no {} rows at {} ranks with these sizes and "
                      "algorithms in {}",
                      name_of(coll), ranks, fmt::join(f.compare_files, ", ")));
    }
  }
  if (!f.json_out.empty()) {
    write_file_exclusive(f.json_out,
                         model::predict_document_text(f.cluster.fit_files, f.compare_files, nodes,
                                                      per_node, tiers, out_rows));
    fmt::print("# predictions: {}\n", f.json_out);
  }
  return outside > 0 ? 1 : 0;
}

}  // namespace

Command add_predict_command(CLI::App& app) {
  auto f = std::make_shared<PredictFlags>();
  auto* sub = app.add_subcommand(
      "predict",
      "Collective time at other rank counts, sizes and node layouts, from tiers fitted to "
      "results files (--fit) or given directly; --compare checks against a measured run");
  add_cluster_flags(*sub, f->cluster);
  sub->add_option("-c,--collective", f->collective, collectives::collective_names(" or "))
      ->capture_default_str();
  sub->add_option("-A,--algorithm", f->algorithms,
                  "Algorithms to predict, comma-separated (default: --allreduce-algo etc.)");
  sub->add_option("--sizes", f->sizes, "Message sizes (full vector), comma-separated")
      ->capture_default_str();
  sub->add_option("--compare", f->compare_files,
                  "Measured results at the predicted layout: print measured time and error")
      ->check(CLI::ExistingFile);
  sub->add_option("--tolerance", f->tolerance_pct,
                  "With --compare: exit 1 when any |error| exceeds this many percent")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--json", f->json_out, "Also write the predictions as JSON (never overwrites)");
  sub->footer(
      "Examples:\n"
      "  ibscope predict --fit r2hosts.json r3hosts.json --nodes 4 --sizes 256K,1M\n"
      "  ibscope predict --fit r2.json r3.json --nodes 4 --compare r4.json --tolerance 10\n"
      "  ibscope predict --nodes 64 --gpus-per-node 8 --inter-lat-us 5 --inter-bw-gbps 48 \\\n"
      "      --inter-links 8 --intra-lat-us 2 --intra-bw-gbps 450 -A ring,dbt --sizes 1G\n"
      "Exit status: 0, 1 when --tolerance is exceeded, 2 usage.");
  return {sub, [f] { return run_predict(*f); }};
}

}  // namespace ibscope::cli
