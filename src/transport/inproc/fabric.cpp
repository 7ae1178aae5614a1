#include "ibscope/transport/inproc/fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace ibscope::transport::inproc {

Fabric::Fabric(const JobShape& shape) : shape_(shape) {
  if (shape.ranks < 1 || shape.ranks_per_host < 1 || shape.ranks % shape.ranks_per_host != 0) {
    throw UsageError(fmt::format("in-process job: {} ranks cannot sit in blocks of {} per host",
                                 shape.ranks, shape.ranks_per_host));
  }
  for (int r = 0; r < shape.ranks; ++r) boxes_.push_back(std::make_unique<Mailbox>());
  round_.resize(static_cast<std::size_t>(shape.ranks));
  arrived_.assign(static_cast<std::size_t>(shape.ranks), false);
}

std::string Fabric::host_of(int rank) const {
  return fmt::format("inproc-host{}", rank / shape_.ranks_per_host);
}

void Fabric::deliver(Op& send, Op& recv) {
  if (send.bytes > recv.bytes) {
    const std::string e =
        fmt::format("message truncated: {} B sent from rank {} with tag {:#x}, {} B received",
                    send.bytes, send.owner, send.tag, recv.bytes);
    send.error = e;
    recv.error = e;
  } else if (send.bytes > 0) {
    std::memcpy(recv.recv_buffer, send.send_buffer, send.bytes);
  }
  // The last touches: the owners may free the ops as soon as they see `done`.
  recv.done.store(true, std::memory_order_release);
  send.done.store(true, std::memory_order_release);
}

namespace {

// A message goes from its source to its receiver; both ops of a match wait in the receiver's box.
int source_of(const Fabric::Op& op) noexcept { return op.is_send ? op.owner : op.peer; }
int receiver_of(const Fabric::Op& op) noexcept { return op.is_send ? op.peer : op.owner; }

}  // namespace

Fabric::Op* Fabric::post(std::unique_ptr<Op> op) {
  Mailbox& box = *boxes_.at(static_cast<std::size_t>(receiver_of(*op)));
  std::lock_guard lock(box.m);
  auto& other_side = op->is_send ? box.recvs : box.sends;
  const auto match = std::find_if(other_side.begin(), other_side.end(), [&](const Op* o) {
    return source_of(*o) == source_of(*op) && o->tag == op->tag;
  });
  if (match == other_side.end()) {
    (op->is_send ? box.sends : box.recvs).push_back(op.get());
    return op.release();
  }
  Op* other = *match;
  other_side.erase(match);
  if (op->is_send) {
    deliver(*op, *other);
  } else {
    deliver(*other, *op);
  }
  return op.release();
}

Fabric::Op* Fabric::post_send(int from, int to, Tag tag, const void* buffer, std::size_t bytes) {
  auto op = std::make_unique<Op>();
  op->owner = from;
  op->peer = to;
  op->tag = tag;
  op->is_send = true;
  op->send_buffer = static_cast<const std::byte*>(buffer);
  op->bytes = bytes;
  return post(std::move(op));
}

Fabric::Op* Fabric::post_recv(int me, int from, Tag tag, void* buffer, std::size_t bytes) {
  auto op = std::make_unique<Op>();
  op->owner = me;
  op->peer = from;
  op->tag = tag;
  op->recv_buffer = static_cast<std::byte*>(buffer);
  op->bytes = bytes;
  return post(std::move(op));
}

void Fabric::release(Op* op) noexcept {
  if (op == nullptr) return;
  if (!op->done.load(std::memory_order_acquire)) {
    // A send waits in its receiver's box, a receive in its owner's; under that box's lock it is
    // either still queued (withdrawn here) or already delivered.
    Mailbox& box = *boxes_[static_cast<std::size_t>(receiver_of(*op))];
    std::lock_guard lock(box.m);
    auto& queue = op->is_send ? box.sends : box.recvs;
    std::erase(queue, op);
  }
  delete op;
}

std::vector<bootstrap::Bytes> Fabric::allgather(int rank, std::span<const std::byte> mine,
                                                std::string_view what, const Deadline& deadline) {
  std::unique_lock lock(m_);
  if (failure_) throw RemoteError(fmt::format("{}: {}", what, *failure_));
  const std::uint64_t my_generation = generation_;
  round_[static_cast<std::size_t>(rank)].assign(mine.begin(), mine.end());
  arrived_[static_cast<std::size_t>(rank)] = true;
  if (++arrivals_ == shape_.ranks) {
    last_ = std::make_shared<const std::vector<bootstrap::Bytes>>(round_);
    arrivals_ = 0;
    std::fill(arrived_.begin(), arrived_.end(), false);
    ++generation_;
    cv_.notify_all();
    return *last_;
  }
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(deadline.remaining_s()));
  const bool done = cv_.wait_until(
      lock, until, [&] { return generation_ != my_generation || failure_.has_value(); });
  if (generation_ != my_generation) return *last_;
  if (failure_) throw RemoteError(fmt::format("{}: {}", what, *failure_));
  (void)done;
  std::string missing;
  for (int r = 0; r < shape_.ranks; ++r) {
    if (!arrived_[static_cast<std::size_t>(r)])
      missing += fmt::format("{}rank {} ({})", missing.empty() ? "" : ", ", r, host_of(r));
  }
  throw TimeoutError(fmt::format("{}: rank {} ({}) waited {:.0f} s for {}", what, rank,
                                 host_of(rank), deadline.budget_s(), missing));
}

void Fabric::publish(int rank, std::string_view key, std::span<const std::byte> value) {
  std::lock_guard lock(m_);
  published_[{std::string(key), rank}] = bootstrap::Bytes(value.begin(), value.end());
}

std::optional<bootstrap::Bytes> Fabric::lookup(std::string_view key, int rank) const {
  std::lock_guard lock(m_);
  const auto it = published_.find({std::string(key), rank});
  if (it == published_.end()) return std::nullopt;
  return it->second;
}

void Fabric::mark_failed(int rank, std::string_view why) {
  std::lock_guard lock(m_);
  if (!failure_) failure_ = fmt::format("rank {} ({}) failed: {}", rank, host_of(rank), why);
  cv_.notify_all();
}

std::optional<std::string> Fabric::failure() const {
  std::lock_guard lock(m_);
  return failure_;
}

}  // namespace ibscope::transport::inproc
