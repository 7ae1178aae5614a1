#pragma once
/// Placing a rank into an emulated host after it joined its job: IBSCOPE_NETNS=<template>, e.g.
/// `ibs-h{rank}`, names a network namespace under /run/netns (as `ip netns add` or
/// tests/netns/hosts.sh create them) for each rank. A PMIx client cannot be started through
/// `ip netns exec` (its launcher's PMIx server is reached over the launcher's loopback), so the
/// PMIx bootstrap connects first and then moves the rank with setns(2), before the hostname
/// exchange: UCX, opened later, then sees only that namespace's devices, and the rank's host is
/// named after the namespace. The TCP store and the local launcher refuse IBSCOPE_NETNS
/// (detect_launch): their ranks are started inside their namespaces instead.

#include <string>
#include <string_view>

namespace ibscope {

/// The environment variable holding the template.
inline constexpr const char* kNetnsEnv = "IBSCOPE_NETNS";

/// Where `ip netns add NAME` puts a named namespace.
inline constexpr const char* kNetnsDir = "/run/netns";

/// The namespace name of one rank: `{rank}` and `{local_rank}` in `tmpl` replaced by the
/// rank's numbers (pure). Throws UsageError for an empty template, an unknown or unclosed
/// `{...}`, a name that cannot be a namespace (contains '/', is '.' or '..', longer than 255
/// bytes), and a template without a placeholder when `size` > 1 (every rank would share one
/// host).
std::string expand_netns_template(std::string_view tmpl, int rank, int local_rank, int size);

/// Moves the calling thread (and the threads it starts afterwards) into the network namespace
/// `dir`/`name` with setns(2) (CLONE_NEWNET). Sockets opened before keep their namespace, so
/// the PMIx connection keeps working. Throws UsageError when the namespace does not exist (with
/// how to create it) or the file is not a network namespace, SystemError when setns is not
/// permitted (it needs CAP_SYS_ADMIN) or fails otherwise.
void enter_netns(const std::string& name, const std::string& dir = kNetnsDir);

/// IBSCOPE_NETNS from the process environment, "" when unset or empty.
std::string netns_template_from_env();

/// Expands `tmpl` for this rank, enters the namespace and, unless IBSCOPE_HOSTNAME is set, sets
/// it to the namespace name, so that local_hostname() and every report name the rank's host
/// after its namespace. Returns the namespace name. Throws as the two calls above.
std::string place_rank_into_netns(std::string_view tmpl, int rank, int local_rank, int size,
                                  const std::string& dir = kNetnsDir);

}  // namespace ibscope
