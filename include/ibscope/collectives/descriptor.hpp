#pragma once
/// One descriptor per collective, as nccl-tests' `testColl` (name, byte counts, init data,
/// bandwidth factor): everything that lists or switches over the collectives iterates
/// descriptors() or asks descriptor_of(). A descriptor owns the collective's names (command,
/// aliases, results files, CSV, report heading, NCCL's), its help text, its busbw factor, its
/// model terms, and its call layout and verification (the hooks collectives/harness/
/// call_layout.cpp dispatches to). Its algorithms are in the registry (collective.hpp). The
/// results schema's enum of collective names (results/schema/) lists the same names (a unit test
/// checks it). How to add a collective: docs/architecture.md.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ibscope/collectives/pattern/ring.hpp"
#include "ibscope/core/collective_kind.hpp"

namespace ibscope::collectives {

struct CallLayout;
class VerifiablePattern;

struct CollectiveDescriptor {
  Collective id{};
  /// The command (`ibscope <name>`) and the name in results files, CSV, reports, tuning tables
  /// and --collective flags: "allreduce".
  std::string_view name{};
  std::vector<std::string_view> aliases{};  ///< more command names (nccl-tests' spelling first)
  std::string_view prose{};                 ///< in sentences and flag help: "All-reduce"
  std::string_view nccl_name{};             ///< NCCL's (tuner CSV); empty: NCCL has none
  std::string_view summary{};               ///< the command's one-line description (--help)
  /// The command's --help examples: lines, each ending in a newline (cli/help_footers.cpp).
  std::string_view help_examples{};

  /// Whether it reduces (the op applies; the model's cost has a gamma term, the command a -o
  /// flag) or only moves data.
  bool reduces = false;
  /// Whether a root rank sends (the command's -r/--root; rows carry "root").
  bool has_root = false;
  /// Whether the training-step model prices it (model/step_model.cpp): `ibscope predict` and
  /// `ibscope model` then take --<name>-algo.
  bool in_training_model = false;
  /// nccl-tests' bus bandwidth factor for p >= 2 ranks (busbw = algbw x factor).
  double (*busbw_factor)(int p) = nullptr;
  /// The elements a call of `count` requested elements moves: all-to-all sends count / p to
  /// every rank, so count rounded down to a multiple of p (nccl-tests' rounding; the row's size
  /// is what is moved). Null: all `count`.
  std::size_t (*call_count)(std::size_t count, int p) = nullptr;

  /// The call layout: points args.sendbuf/recvbuf and input/output (with their counts and
  /// first indices) into `send` and `recv` for rank block `mine` of a `count`-element vector of
  /// `elem_bytes`-byte elements; args.count/type/op/root are set already.
  void (*lay_out)(CallLayout& l, std::byte* send, std::byte* recv, pattern::Span mine,
                  std::size_t elem_bytes, bool in_place) = nullptr;
  /// Fills this rank's input for one verification run (outputs already poisoned).
  void (*fill_input)(int rank, const VerifiablePattern& pattern, const CallLayout& l,
                     std::uint64_t seed) = nullptr;
  /// Elements of this rank's output that differ from what the collective must deliver.
  std::size_t (*count_wrong)(int ranks, const VerifiablePattern& pattern, const CallLayout& l,
                             std::uint64_t seed) = nullptr;
  /// Whether an in-place call must still overwrite the output beyond this rank's input (so
  /// verification poisons it first): all-gather, broadcast.
  bool in_place_output_beyond_input = false;
  /// Whether it has an in-place form; without one the sweep measures out of place only and the
  /// table's in-place columns say "-" (all-to-all-v, as nccl-tests').
  bool has_in_place = true;
  /// Whether each call follows a per-peer counts matrix (`--counts`, CollectiveArgs::counts;
  /// rows carry its imbalance): all-to-all-v.
  bool takes_counts = false;
};

/// Every collective, in presentation order (commands, `ibscope algorithms`, reports).
std::span<const CollectiveDescriptor> descriptors() noexcept;
/// The descriptor of `c`.
const CollectiveDescriptor& descriptor_of(Collective c) noexcept;

/// The names, as prose lists them: "allreduce, reduce_scatter, allgather or broadcast" (with
/// `last` " or "), or joined by ", " throughout (`last` ", ").
std::string collective_names(std::string_view last);

}  // namespace ibscope::collectives

namespace ibscope {

/// The collective's name (descriptor's `name`): "allreduce", "reduce_scatter", ...
std::string_view name_of(Collective c) noexcept;
/// The collective called `name` (as name_of() spells it), or nullopt.
std::optional<Collective> collective_named(std::string_view name) noexcept;
/// nccl-tests bus bandwidth factor: 2(p-1)/p for all-reduce, (p-1)/p for reduce-scatter and
/// all-gather, 1 for broadcast (0 for p == 1: nothing crosses a link).
double busbw_factor(Collective c, int p) noexcept;
/// Whether the collective reduces (the op applies) or only moves data.
bool reduces(Collective c) noexcept;

}  // namespace ibscope
