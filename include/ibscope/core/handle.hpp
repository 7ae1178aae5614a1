#pragma once
/// Handle<T*, Destroy>: a move-only owner of a C library object (ucp_context_h, ibv_pd*, ...).
/// The move empties the source; the destructor calls Destroy once and never throws.

#include <utility>

namespace ibscope {

template <typename T, auto Destroy>
class Handle {
 public:
  Handle() noexcept = default;
  explicit Handle(T handle) noexcept : handle_(handle) {}
  Handle(Handle&& other) noexcept : handle_(std::exchange(other.handle_, T{})) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, T{});
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  T get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != T{}; }
  void reset() noexcept {
    if (handle_ != T{}) Destroy(std::exchange(handle_, T{}));
  }

 private:
  T handle_{};
};

}  // namespace ibscope
