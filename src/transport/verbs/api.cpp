#include "ibscope/transport/verbs/api.hpp"

#include <infiniband/verbs.h>

namespace ibscope::verbs {
namespace {
Api& default_api() noexcept {
  static Api instance;
  return instance;
}
Api* g_current = nullptr;
}  // namespace

ibv_device** Api::get_device_list(int* num_devices) { return ibv_get_device_list(num_devices); }
void Api::free_device_list(ibv_device** list) { ibv_free_device_list(list); }
const char* Api::get_device_name(ibv_device* device) { return ibv_get_device_name(device); }
ibv_context* Api::open_device(ibv_device* device) { return ibv_open_device(device); }
int Api::close_device(ibv_context* context) { return ibv_close_device(context); }
int Api::query_device(ibv_context* context, ibv_device_attr* attr) {
  return ibv_query_device(context, attr);
}
int Api::query_port(ibv_context* context, std::uint8_t port, ibv_port_attr* attr) {
  return ibv_query_port(context, port, attr);
}
int Api::query_gid_ex(ibv_context* context, std::uint32_t port, std::uint32_t index,
                      ibv_gid_entry* entry) {
  return ibv_query_gid_ex(context, port, index, entry, 0);
}
ibv_pd* Api::alloc_pd(ibv_context* context) { return ibv_alloc_pd(context); }
int Api::dealloc_pd(ibv_pd* pd) { return ibv_dealloc_pd(pd); }
ibv_mr* Api::reg_mr(ibv_pd* pd, void* addr, std::size_t length, int access) {
  return ibv_reg_mr(pd, addr, length, access);
}
ibv_mr* Api::reg_dmabuf_mr(ibv_pd* pd, std::uint64_t offset, std::size_t length, std::uint64_t iova,
                           int fd, int access) {
  return ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access);
}
int Api::dereg_mr(ibv_mr* mr) { return ibv_dereg_mr(mr); }
ibv_cq* Api::create_cq(ibv_context* context, int cqe) {
  return ibv_create_cq(context, cqe, nullptr, nullptr, 0);
}
int Api::destroy_cq(ibv_cq* cq) { return ibv_destroy_cq(cq); }
ibv_qp* Api::create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) { return ibv_create_qp(pd, attr); }
int Api::modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) {
  return ibv_modify_qp(qp, attr, attr_mask);
}
int Api::destroy_qp(ibv_qp* qp) { return ibv_destroy_qp(qp); }
int Api::post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  return ibv_post_send(qp, wr, bad_wr);
}
int Api::post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  return ibv_post_recv(qp, wr, bad_wr);
}
int Api::poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc) {
  return ibv_poll_cq(cq, num_entries, wc);
}

Api& api() noexcept { return g_current != nullptr ? *g_current : default_api(); }

ScopedApi::ScopedApi(Api& replacement) noexcept : previous_(g_current) { g_current = &replacement; }
ScopedApi::~ScopedApi() { g_current = previous_; }

}  // namespace ibscope::verbs
