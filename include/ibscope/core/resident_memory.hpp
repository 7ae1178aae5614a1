#pragma once
/// This process's resident memory (VmRSS), as the kernel reports it in /proc/self/status.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ibscope {

/// The whole text of a /proc file (status, meminfo); empty when it cannot be read. Never
/// throws.
std::string read_proc_text(const char* path) noexcept;

/// A "Key:   12345 kB" line of a /proc text (status, meminfo), in bytes; `key` includes the
/// colon. nullopt when there is none or it does not parse. Pure.
std::optional<std::uint64_t> parse_kib_field(std::string_view text, std::string_view key);

/// The VmRSS line of a /proc/<pid>/status text ("VmRSS:\t  12345 kB"), in bytes; nullopt when
/// there is none or it does not parse. Pure.
std::optional<std::uint64_t> parse_vm_rss_bytes(std::string_view status_text);

/// VmRSS of this process in bytes; 0 where /proc/self/status has none (not Linux). Never
/// throws.
std::uint64_t resident_bytes() noexcept;

}  // namespace ibscope
