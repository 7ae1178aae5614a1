#include "ibscope/probes/peer_info.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "ibscope/core/error.hpp"

namespace ibscope::probes {
namespace {

using nlohmann::json;

// Reads the fields of one peer's JSON object; every failure names the rank and the field.
class PeerFields {
 public:
  PeerFields(const json& j, int rank) : j_(j), rank_(rank) {
    if (!j_.is_object()) fail("", fmt::format("expected a JSON object, got {}", j_.type_name()));
  }

  [[noreturn]] void fail(std::string_view field, const std::string& why) const {
    throw RemoteError(fmt::format("rank {} sent a malformed port description: {}{}{}", rank_, field,
                                  field.empty() ? "" : ": ", why));
  }

  const json& at(const char* name) const {
    const auto it = j_.find(name);
    if (it == j_.end()) fail(name, "missing");
    return *it;
  }

  std::string text(const char* name) const {
    const json& v = at(name);
    if (!v.is_string()) fail(name, fmt::format("expected a string, got {}", v.type_name()));
    return v.get<std::string>();
  }

  double number(const char* name) const {
    const json& v = at(name);
    if (!v.is_number()) fail(name, fmt::format("expected a number, got {}", v.type_name()));
    return v.get<double>();
  }

  // Compared as 64-bit values before narrowing, so 4294967297 is not read as 1.
  std::int64_t integer(const char* name, std::int64_t lo, std::int64_t hi) const {
    const json& v = at(name);
    const bool in_range =
        (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
         v.get<std::int64_t>() >= lo) ||
        (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() >= lo &&
         v.get<std::int64_t>() <= hi);
    if (!in_range) {
      fail(name, fmt::format("expected an integer in {}..{}, got {}", lo, hi,
                             v.is_number() ? v.dump() : std::string(v.type_name())));
    }
    return v.get<std::int64_t>();
  }

  std::vector<std::string> texts(const char* name) const {
    const json& v = at(name);
    if (!v.is_array()) fail(name, fmt::format("expected an array, got {}", v.type_name()));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) fail(fmt::format("{}[{}]", name, i), "expected a string");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

 private:
  const json& j_;
  int rank_;
};

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

}  // namespace

bootstrap::Bytes encode_rank_port(const RankPort& r) {
  const json j = {{"device", r.device},
                  {"link_layer", r.link_layer},
                  {"data_rate_gbit", r.data_rate_gbit},
                  {"gid_index", r.gid_index},
                  {"gid", r.gid},
                  {"active_mtu_bytes", r.active_mtu_bytes},
                  {"binding", r.binding},
                  {"mem_initiator", r.mem_initiator},
                  {"mem_responder", r.mem_responder},
                  {"gpu", r.gpu},
                  {"cuda_device", r.cuda_device},
                  {"gpu_name", r.gpu_name},
                  {"gpu_nic_path", r.gpu_nic_path},
                  {"registration", r.registration},
                  {"gpu_choice", r.gpu_choice},
                  {"gpu_warnings", r.gpu_warnings}};
  const std::string text = j.dump();
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return bootstrap::Bytes(p, p + text.size());
}

RankPort decode_rank_port(std::span<const std::byte> bytes, int rank) {
  json j;
  try {
    j = json::parse(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  } catch (const json::exception& e) {  // parse_error; out_of_range for 1e400
    throw RemoteError(
        fmt::format("rank {} sent a malformed port description: not JSON: {}", rank, e.what()));
  }
  const PeerFields f(j, rank);
  RankPort r;
  r.device = f.text("device");
  r.link_layer = f.text("link_layer");
  r.data_rate_gbit = f.number("data_rate_gbit");
  r.gid_index = static_cast<int>(f.integer("gid_index", -1, kIntMax));
  r.gid = f.text("gid");
  r.active_mtu_bytes = static_cast<std::uint32_t>(f.integer("active_mtu_bytes", 0, 0xffffffffLL));
  r.binding = f.text("binding");
  r.mem_initiator = f.text("mem_initiator");
  r.mem_responder = f.text("mem_responder");
  r.gpu = f.text("gpu");
  r.cuda_device = static_cast<int>(f.integer("cuda_device", -1, kIntMax));
  r.gpu_name = f.text("gpu_name");
  r.gpu_nic_path = f.text("gpu_nic_path");
  r.registration = f.text("registration");
  r.gpu_choice = f.text("gpu_choice");
  r.gpu_warnings = f.texts("gpu_warnings");
  return r;
}

bootstrap::Bytes encode_qp_addresses(std::span<const verbs::QpAddress> addresses) {
  const auto* p = reinterpret_cast<const std::byte*>(addresses.data());
  return bootstrap::Bytes(p, p + addresses.size_bytes());
}

std::vector<verbs::QpAddress> decode_qp_addresses(std::span<const std::byte> bytes,
                                                  std::size_t max_qps, const std::string& peer) {
  constexpr std::size_t kStruct = sizeof(verbs::QpAddress);
  if (bytes.size() % kStruct != 0) {
    throw RemoteError(fmt::format("{} sent {} bytes of QP addresses, not whole {}-byte structs",
                                  peer, bytes.size(), kStruct));
  }
  if (bytes.size() / kStruct > max_qps) {
    throw RemoteError(fmt::format("{} sent {} QP addresses, more than the {} expected", peer,
                                  bytes.size() / kStruct, max_qps));
  }
  std::vector<verbs::QpAddress> out(bytes.size() / kStruct);
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const verbs::QpAddress& a = out[i];
    if (a.psn >= (1u << 24)) {
      throw RemoteError(
          fmt::format("{} sent QP address {} with PSN {:#x}, wider than 24 bits", peer, i, a.psn));
    }
    // IBV_MTU_256 (1) .. IBV_MTU_4096 (5)
    if (a.active_mtu_code < 1 || a.active_mtu_code > 5) {
      throw RemoteError(fmt::format("{} sent QP address {} with MTU code {} (expected 1..5)", peer,
                                    i, a.active_mtu_code));
    }
  }
  return out;
}

}  // namespace ibscope::probes
