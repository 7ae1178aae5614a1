#include "ibscope/transport/ucx/endpoint.hpp"

#include <fmt/format.h>
#include <ucp/api/ucp.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>

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

Endpoint::Endpoint(std::shared_ptr<Worker> worker, int peer_rank, const Bytes& remote_address)
    : worker_(std::move(worker)), peer_(peer_rank) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(remote_address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = error_trampoline;
  params.err_handler.arg = &error_status_;
  const ucs_status_t st = ucp_ep_create(worker_->get(), &params, &ep_);
  if (st != UCS_OK) {
    throw Error(ErrorKind::kSystem,
                fmt::format("ucp_ep_create to rank {}: {} (no UCX transport reaches that peer; "
                            "check UCX_TLS / UCX_NET_DEVICES)",
                            peer_rank, ucs_status_string(st)));
  }
}

Endpoint::~Endpoint() { close(0.5); }

void Endpoint::close(double timeout_s) noexcept {
  if (ep_ == nullptr) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = error_status_ != UCS_OK ? UCP_EP_CLOSE_FLAG_FORCE : 0;
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

std::string summarize_ep_info(const std::string& text) {
  // Lines look like "#   lane[0]:  2:posix/memory.0 md[1]           <proxy> -> md[1]/posix  am am_bw#0"
  // or "lane[1]: 8:cma/memory.0 md[3] ... rma_bw#0". Keep transport/device per purpose.
  static const std::regex lane(R"(lane\[\d+\]:\s+\d+:([\w\-]+)/([\w\-\.:]+?)(\.\d+)?\s.*?\s((?:am|tag|rma|amo|rkey|wireup|keepalive|cm)[\w#\s]*)$)");
  std::map<std::string, std::set<std::string>> by_purpose;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    std::smatch m;
    if (!std::regex_search(line, m, lane)) continue;
    const std::string tl = m[1].str() + "/" + m[2].str();
    std::string purposes = m[4].str();
    for (const char* p : {"am_bw", "rma_bw", "tag", "am", "rma", "amo", "rkey_ptr"}) {
      if (purposes.find(p) != std::string::npos) {
        by_purpose[p].insert(tl);
        break;
      }
    }
  }
  if (by_purpose.empty()) return "unknown";
  std::string out;
  for (const auto& [purpose, tls] : by_purpose) {
    if (!out.empty()) out += "; ";
    out += purpose + ": ";
    bool first = true;
    for (const auto& t : tls) {
      out += (first ? "" : ",") + t;
      first = false;
    }
  }
  return out;
}

}  // namespace ibscope::ucx
