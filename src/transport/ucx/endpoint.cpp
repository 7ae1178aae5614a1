#include "ibscope/transport/ucx/endpoint.hpp"

#include <fmt/format.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "ibscope/core/clock.hpp"
#include "ibscope/core/error.hpp"

namespace ibscope::ucx {

namespace {
void error_trampoline(void* arg, ucp_ep_h ep, ucs_status_t status) {
  // Runs inside ucp_worker_progress; only records the status, the waiter reports it.
  (void)ep;
  *static_cast<int*>(arg) = static_cast<int>(status);
}
}  // namespace

Endpoint::Endpoint(std::shared_ptr<Worker> worker, int peer_rank,
                   const bootstrap::Bytes& remote_address, bool peer_error_handling)
    : worker_(std::move(worker)), peer_(peer_rank), peer_error_handling_(peer_error_handling) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(remote_address.data());
  params.err_mode = peer_error_handling ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  params.err_handler.cb = error_trampoline;
  params.err_handler.arg = &error_status_;
  const ucs_status_t st = ucp_ep_create(worker_->get(), &params, &ep_);
  if (st != UCS_OK) {
    const auto var = [](const char* name) {
      const char* v = std::getenv(name);
      return v != nullptr && *v != '\0' ? std::string(v) : std::string("<unset>");
    };
    throw Error(
        ErrorKind::kSystem,
        fmt::format("ucp_ep_create to rank {}: {} with UCX_TLS={} UCX_NET_DEVICES={}: no "
                    "UCX transport reaches that peer, or an rc/dc transport has no "
                    "wire-up transport (ud or tcp) beside it; unset both to let ibscope "
                    "choose (docs/ucx-transports.md)",
                    peer_rank, ucs_status_string(st), var("UCX_TLS"), var("UCX_NET_DEVICES")));
  }
}

Endpoint::~Endpoint() { close(1.0, true); }

void Endpoint::close(double timeout_s, bool force) noexcept {
  if (ep_ == nullptr) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force || error_status_ != UCS_OK ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  void* req = ucp_ep_close_nbx(ep_, &param);
  ep_ = nullptr;
  if (req == nullptr || UCS_PTR_IS_ERR(req)) return;
  const Deadline deadline(timeout_s);
  while (ucp_request_check_status(req) == UCS_INPROGRESS && !deadline.expired()) {
    worker_->progress();
  }
  ucp_request_free(req);
}

std::string Endpoint::transports() const {
  if (ep_ == nullptr) return "closed";
  char* text = nullptr;
  std::size_t len = 0;
  FILE* stream = open_memstream(&text, &len);
  if (stream == nullptr) return "unknown";
  ucp_ep_print_info(ep_, stream);
  std::fclose(stream);
  std::string s(text, len);
  std::free(text);
  return summarize_ep_info(s);
}

bool uses_nic_registration(std::string_view summary) {
  // Lane names start a word: "rc_mlx5/mlx5_0:1[...]", "ud_verbs/...", "dc_mlx5/...".
  for (std::string_view prefix : {"rc_", "dc_", "ud_"}) {
    for (std::size_t at = summary.find(prefix); at != std::string_view::npos;
         at = summary.find(prefix, at + 1)) {
      if (at == 0 || summary[at - 1] == ' ') return true;
    }
  }
  return false;
}

std::vector<std::string> lane_devices(std::string_view summary) {
  summary = summary.substr(0, summary.find(" | "));  // the lanes, not the protocols
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < summary.size()) {
    std::size_t end = summary.find(' ', at);
    if (end == std::string_view::npos) end = summary.size();
    std::string_view word = summary.substr(at, end - at);  // "rc_verbs/rxe0:1[rma_bw#0,...]"
    at = end + 1;
    word = word.substr(0, word.find('['));
    const auto slash = word.find('/');
    if (slash == std::string_view::npos) continue;
    const std::string_view tl = word.substr(0, slash);
    if (!tl.starts_with("rc_") && !tl.starts_with("dc_") && !tl.starts_with("ud_")) continue;
    std::string device(word.substr(slash + 1));
    if (std::find(out.begin(), out.end(), device) == out.end()) out.push_back(std::move(device));
  }
  return out;
}

std::string summarize_ep_info(const std::string& text) {
  // ucp_ep_print_info lines of interest:
  //   "lane[0]:  3:sysv/memory.0 md[2]  -> md[2]/sysv/sysdev[255] am am_bw#0 keepalive"
  //   "tag_send: 0..<egr/short>..93..<egr/bcopy>..8256..<rndv>..(inf)"
  // Result: "sysv/memory[am,am_bw#0,keepalive] cma/memory[rma_bw#0] | tag_send 0..<egr/short>..."
  std::string lanes, tag_protocols;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) {
      if (x != "#") w.push_back(x);
    }
    if (w.size() >= 2 && w[0].starts_with("lane[")) {
      std::string tl = w[1].substr(w[1].find(':') + 1);  // "sysv/memory.0"
      if (const auto dot = tl.rfind('.'); dot != std::string::npos) tl.erase(dot);
      std::string purposes;
      bool after_arrow = false;
      for (std::size_t i = 2; i < w.size(); ++i) {
        if (w[i] == "->") {
          after_arrow = true;
          ++i;  // skip the remote md
          continue;
        }
        if (after_arrow) purposes += (purposes.empty() ? "" : ",") + w[i];
      }
      lanes += (lanes.empty() ? "" : " ") + tl + (purposes.empty() ? "" : "[" + purposes + "]");
    } else if (w.size() >= 2 && w[0] == "tag_send:") {
      tag_protocols = "tag_send " + w[1];
    }
  }
  if (lanes.empty()) return "unknown";
  return tag_protocols.empty() ? lanes : lanes + " | " + tag_protocols;
}

}  // namespace ibscope::ucx
