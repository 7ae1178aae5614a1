#pragma once
/// The one thin layer every libibverbs call goes through. The default implementation calls
/// libibverbs directly; tests install a subclass (ScopedVerbsApi) that fails chosen calls
/// (ENOMEM on the Nth ibv_reg_mr, a failed ibv_modify_qp, a bad work completion) below the
/// real implementation. verbs.h stays out of this header: ibv_* types are forward-declared.
///
/// Error channels follow libibverbs: create calls return nullptr and set errno; query, modify,
/// destroy and post calls return an errno value (0 on success); poll_cq returns the number of
/// completions or a negative value.

#include <cstddef>
#include <cstdint>

struct ibv_device;
struct ibv_context;
struct ibv_device_attr;
struct ibv_port_attr;
struct ibv_gid_entry;
struct ibv_pd;
struct ibv_mr;
struct ibv_cq;
struct ibv_comp_channel;
struct ibv_qp;
struct ibv_qp_attr;
struct ibv_qp_init_attr;
struct ibv_send_wr;
struct ibv_recv_wr;
struct ibv_wc;

namespace ibscope::verbs {

class Api {
 public:
  Api() = default;
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;
  virtual ~Api() = default;

  virtual ibv_device** get_device_list(int* num_devices);
  virtual void free_device_list(ibv_device** list);
  virtual const char* get_device_name(ibv_device* device);
  virtual ibv_context* open_device(ibv_device* device);
  virtual int close_device(ibv_context* context);
  virtual int query_device(ibv_context* context, ibv_device_attr* attr);
  virtual int query_port(ibv_context* context, std::uint8_t port, ibv_port_attr* attr);
  virtual int query_gid_ex(ibv_context* context, std::uint32_t port, std::uint32_t index,
                           ibv_gid_entry* entry);
  virtual ibv_pd* alloc_pd(ibv_context* context);
  virtual int dealloc_pd(ibv_pd* pd);
  virtual ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t length, int access);
  /// ibv_reg_dmabuf_mr: registers `length` bytes at `offset` into the dma-buf `fd`, addressed
  /// by the peer and in work requests as `iova`.
  virtual ibv_mr* reg_dmabuf_mr(ibv_pd* pd, std::uint64_t offset, std::size_t length,
                                std::uint64_t iova, int fd, int access);
  virtual int dereg_mr(ibv_mr* mr);
  virtual ibv_cq* create_cq(ibv_context* context, int cqe);
  virtual int destroy_cq(ibv_cq* cq);
  virtual ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr);
  virtual int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask);
  virtual int destroy_qp(ibv_qp* qp);
  virtual int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
  virtual int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
  virtual int poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc);
};

/// The implementation in use (the libibverbs one unless a test installed another).
Api& api() noexcept;

/// Installs `replacement` for its lifetime, restoring the previous one afterwards. For tests.
class ScopedApi {
 public:
  explicit ScopedApi(Api& replacement) noexcept;
  ScopedApi(const ScopedApi&) = delete;
  ScopedApi& operator=(const ScopedApi&) = delete;
  ~ScopedApi();

 private:
  Api* previous_;
};

}  // namespace ibscope::verbs
