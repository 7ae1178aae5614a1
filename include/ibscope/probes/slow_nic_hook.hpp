#pragma once
/// Test fault hook IBSCOPE_FAULT_SLOW_NIC=<device>:<microseconds> (docs/fault-hooks.md): the
/// bandwidth loop (run_stream) sleeps that long after every poll of a send completion queue of
/// that RDMA device that returned completions. Below the real verbs code: the device, its QPs
/// and the completions are real; only this process's CPU waits, so the device's figures drop
/// as a slow NIC's would.

#include <optional>
#include <string>
#include <string_view>

namespace ibscope::probes {

struct SlowNic {
  std::string device;
  double delay_us = 0;
};

inline constexpr std::string_view kSlowNicVariable = "IBSCOPE_FAULT_SLOW_NIC";

/// Parses the hook's value. Throws UsageError naming the variable and its grammar.
SlowNic parse_slow_nic(std::string_view value);

/// The delay for `device` from this process's environment (read and parsed once; a malformed
/// value throws UsageError at every call); 0 when the hook is unset or names another device.
double slow_nic_delay_us(std::string_view device);

}  // namespace ibscope::probes
