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

namespace ibscope::bootstrap {

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

/// Gives this process its own mount namespace (unshare(CLONE_NEWNS), mounts made slaves of the
/// host's), so that place_rank_into_netns() can mount a sysfs of the rank's network namespace
/// on /sys, as `ip netns exec` does: UCX finds network devices in /sys/class/net, which shows
/// the namespace of whoever mounted sysfs, not of the thread that reads it. Must run while the
/// process has one thread (the kernel refuses a new mount namespace to a thread that shares its
/// filesystem context): call it before PMIx_Init. Throws SystemError (EPERM: CAP_SYS_ADMIN
/// needed; EINVAL: threads already running).
void detach_mounts_for_netns();

/// Whether detach_mounts_for_netns() succeeded in this process.
bool mounts_detached_for_netns() noexcept;

/// IBSCOPE_NETNS from the process environment, "" when unset or empty.
std::string netns_template_from_env();

/// Expands `tmpl` for this rank, enters the namespace, mounts that namespace's sysfs on /sys
/// when detach_mounts_for_netns() ran before (never otherwise: /sys would change for the whole
/// machine) and, unless IBSCOPE_HOSTNAME is set, sets it to the namespace name, so that
/// local_hostname() and every report name the rank's host after its namespace. Returns the
/// namespace name. Throws as the calls above; SystemError when /sys cannot be remounted.
std::string place_rank_into_netns(std::string_view tmpl, int rank, int local_rank, int size,
                                  const std::string& dir = kNetnsDir);

}  // namespace ibscope::bootstrap
