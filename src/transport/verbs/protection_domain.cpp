#include "ibscope/transport/verbs/protection_domain.hpp"

#include <infiniband/verbs.h>

#include <cerrno>

#include "ibscope/transport/verbs/api.hpp"
#include "ibscope/transport/verbs/verbs_error.hpp"

namespace ibscope::verbs {

void dealloc_pd(ibv_pd* pd) noexcept { api().dealloc_pd(pd); }

std::shared_ptr<ProtectionDomain> ProtectionDomain::create(std::shared_ptr<DeviceContext> device) {
  ibv_pd* pd = api().alloc_pd(device->get());
  if (pd == nullptr) throw VerbsError("ibv_alloc_pd", device->name(), errno);
  return std::shared_ptr<ProtectionDomain>(new ProtectionDomain(std::move(device), pd));
}

}  // namespace ibscope::verbs
