#include "ibscope/transport/ucx/staged_transfer.hpp"

#include <algorithm>
#include <bit>

namespace ibscope::ucx {

std::size_t BouncePool::size_class(std::size_t bytes) noexcept {
  return std::bit_ceil(std::max<std::size_t>(bytes, 4096));
}

memory::BounceBuffer BouncePool::take(std::size_t bytes) {
  const std::size_t cls = size_class(bytes);
  auto& list = free_[cls];
  if (!list.empty()) {
    memory::BounceBuffer b = std::move(list.back());
    list.pop_back();
    return b;
  }
  allocated_bytes_ += cls;
  return engine_.allocate_bounce(cls);
}

void BouncePool::give(memory::BounceBuffer buffer) {
  if (buffer.data() == nullptr) return;
  free_[size_class(buffer.size())].push_back(std::move(buffer));
}

std::size_t fragment_count(std::size_t bytes, std::size_t fragment_bytes) noexcept {
  if (fragment_bytes == 0 || bytes <= fragment_bytes) return 1;
  return (bytes + fragment_bytes - 1) / fragment_bytes;
}

StagedTransfer::StagedTransfer(const Setup& setup, bool is_send, int peer, std::uint64_t tag,
                               std::byte* user, std::size_t bytes)
    : setup_(setup),
      is_send_(is_send),
      peer_(peer),
      tag_(tag),
      user_(user),
      bytes_(bytes),
      fragments_(fragment_count(bytes, setup.fragment_bytes)) {
  if (setup_.fragment_bytes == 0) setup_.fragment_bytes = std::max<std::size_t>(bytes, 1);
  setup_.window = std::max(1, setup_.window);
  start_fragments();
  setup_.comm->add_staged(this);
}

StagedTransfer::~StagedTransfer() {
  setup_.comm->remove_staged(this);
  // Complete transfers have an empty window. On an error path, pending fragment requests are
  // released by their own destructors (receives cancelled first); a bounce buffer whose copy
  // may still run is not returned to the pool but freed with its fragment (cudaFreeHost waits
  // for the device).
  for (Fragment& f : window_) {
    const bool copying = f.state == State::kCopying && setup_.engine != nullptr;
    if (copying && !setup_.engine->done(f.ticket)) continue;
    if (setup_.pool != nullptr) setup_.pool->give(std::move(f.bounce));
  }
}

std::size_t StagedTransfer::length(std::size_t i) const noexcept {
  return std::min(setup_.fragment_bytes, bytes_ - std::min(bytes_, offset(i)));
}

void StagedTransfer::start_fragments() {
  while (next_ < fragments_ && window_.size() < static_cast<std::size_t>(setup_.window)) {
    Fragment f;
    f.index = next_++;
    const std::size_t len = length(f.index);
    std::byte* at = user_ + offset(f.index);
    if (setup_.engine == nullptr) {
      f.request = is_send_ ? setup_.comm->post_send(peer_, tag_, at, len)
                           : setup_.comm->post_recv(peer_, tag_, at, len);
      f.state = State::kOnWire;
    } else {
      f.bounce = setup_.pool->take(len);
      if (is_send_) {
        f.ticket = setup_.engine->start(f.bounce.data(), at, len);
        f.state = State::kCopying;
      } else {
        f.request = setup_.comm->post_recv(peer_, tag_, f.bounce.data(), len);
        f.state = State::kOnWire;
      }
    }
    window_.push_back(std::move(f));
  }
}

bool StagedTransfer::advance_send() {
  // Copies finish in order and fragments must be sent in order: walk from the front.
  for (Fragment& f : window_) {
    if (f.state != State::kCopying) continue;
    if (!setup_.engine->done(f.ticket)) break;
    f.request = setup_.comm->post_send(peer_, tag_, f.bounce.data(), length(f.index));
    f.state = State::kOnWire;
  }
  while (!window_.empty() && window_.front().state == State::kOnWire &&
         window_.front().request.test()) {
    if (setup_.pool != nullptr) setup_.pool->give(std::move(window_.front().bounce));
    window_.pop_front();
  }
  return window_.empty();
}

bool StagedTransfer::advance_recv() {
  for (Fragment& f : window_) {
    if (f.state != State::kOnWire || !f.request.test()) continue;
    if (setup_.engine == nullptr) {
      f.state = State::kCopying;  // already in place; ticket 0 is always done
      continue;
    }
    f.ticket = setup_.engine->start(user_ + offset(f.index), f.bounce.data(), length(f.index));
    f.state = State::kCopying;
  }
  while (!window_.empty() && window_.front().state == State::kCopying &&
         (setup_.engine == nullptr || setup_.engine->done(window_.front().ticket))) {
    if (setup_.pool != nullptr) setup_.pool->give(std::move(window_.front().bounce));
    window_.pop_front();
  }
  return window_.empty();
}

bool StagedTransfer::advance() {
  if (done_) return true;
  done_ = advance_window();
  return done_;
}

bool StagedTransfer::advance_window() {
  bool empty;
  do {
    empty = is_send_ ? advance_send() : advance_recv();
    if (next_ >= fragments_) return empty;
    const std::size_t before = window_.size();
    start_fragments();
    if (window_.size() == before) return false;
  } while (true);
}

}  // namespace ibscope::ucx
