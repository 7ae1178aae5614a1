#pragma once
/// Fills the RDMA part of a host topology from libibverbs: every port of every device (state,
/// link layer, speed x width -> rates, MTU, GID table with RoCE types, the GID ibscope would
/// choose), and whether the host has a usable RDMA device at all.

#include "ibscope/topo/host_topology.hpp"
#include "ibscope/transport/verbs/device.hpp"

namespace ibscope::verbs {

/// Queries every port of every NIC in `host` and adds the devices libibverbs opens that
/// discovery did not list. Sets rdma_available, or rdma_reason to the one-line reason and
/// remedy (DeviceContext::open's EnvironmentError) when no device can be opened; a device that
/// fails to open or query gets the error line in its `error`. Recomputes the GPU<->NIC classes
/// when devices were added. Never throws for a missing or broken device.
void fill_rdma_ports(topo::HostTopology& host);

/// PortInfo -> the topology's port record, with the GID choose_gid_index picks (pure).
topo::NicPort to_nic_port(const PortInfo& info);

}  // namespace ibscope::verbs
