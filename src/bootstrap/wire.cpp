#include "ibscope/bootstrap/wire.hpp"

#include <fmt/format.h>

#include <cstring>

namespace ibscope::bootstrap::wire {
namespace {

class Writer {
 public:
  explicit Writer(MsgType type) {
    buf_.resize(kHeaderBytes);
    buf_[4] = std::byte(type);
  }
  void u8(std::uint8_t v) { buf_.push_back(std::byte(v)); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) buf_.push_back(std::byte((v >> (8 * i)) & 0xff));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) buf_.push_back(std::byte((v >> (8 * i)) & 0xff));
  }
  void bytes(std::span<const std::byte> b) {
    u32(static_cast<std::uint32_t>(b.size()));
    buf_.insert(buf_.end(), b.begin(), b.end());
  }
  void str(const std::string& s) {
    bytes(std::span(reinterpret_cast<const std::byte*>(s.data()), s.size()));
  }
  Bytes finish() {
    const auto len = static_cast<std::uint32_t>(buf_.size() - 4);
    for (int i = 0; i < 4; ++i)
      buf_[static_cast<std::size_t>(i)] = std::byte((len >> (8 * i)) & 0xff);
    return std::move(buf_);
  }

 private:
  Bytes buf_;
};

class Reader {
 public:
  Reader(std::span<const std::byte> p, const char* msg) : p_(p), msg_(msg) {}
  std::uint8_t u8() {
    need(1);
    return static_cast<std::uint8_t>(p_[pos_++]);
  }
  std::uint32_t u32() {
    need(4);
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t(p_[pos_++]) << (8 * i);
    return v;
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t(p_[pos_++]) << (8 * i);
    return v;
  }
  Bytes bytes() {
    const std::uint32_t n = u32();
    need(n);  // bounded by what is present before anything is allocated
    Bytes b(p_.begin() + static_cast<std::ptrdiff_t>(pos_),
            p_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return b;
  }
  std::string str() {
    const std::uint32_t n = u32();
    need(n);
    std::string s(reinterpret_cast<const char*>(p_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  void done() const {
    if (pos_ != p_.size()) {
      throw ProtocolError(fmt::format("bootstrap protocol: {} message has {} trailing bytes", msg_,
                                      p_.size() - pos_));
    }
  }
  std::size_t left() const { return p_.size() - pos_; }

 private:
  void need(std::size_t n) const {
    if (n > p_.size() - pos_) {
      throw ProtocolError(fmt::format("bootstrap protocol: truncated {} message", msg_));
    }
  }
  std::span<const std::byte> p_;
  const char* msg_;
  std::size_t pos_ = 0;
};

}  // namespace

Header decode_header(std::span<const std::byte, kHeaderBytes> h, std::uint32_t max_frame_bytes) {
  std::uint32_t len = 0;
  for (int i = 0; i < 4; ++i) len |= std::uint32_t(h[static_cast<std::size_t>(i)]) << (8 * i);
  if (len == 0 || len > max_frame_bytes) {
    throw ProtocolError(
        fmt::format("bootstrap protocol: frame length {} outside 1..{}", len, max_frame_bytes));
  }
  const auto type = static_cast<std::uint8_t>(h[4]);
  if (type < static_cast<std::uint8_t>(MsgType::kHello) ||
      type > static_cast<std::uint8_t>(MsgType::kValues)) {
    throw ProtocolError(fmt::format("bootstrap protocol: unknown message type {}", type));
  }
  return Header{static_cast<MsgType>(type), len - 1};
}

Bytes encode(const Hello& m) {
  Writer w(MsgType::kHello);
  w.str(m.token);
  w.u32(m.rank);
  w.u32(m.size);
  w.str(m.host);
  return w.finish();
}

Bytes encode(const Contrib& m) {
  Writer w(MsgType::kContrib);
  w.u64(m.seq);
  w.u8(static_cast<std::uint8_t>(m.mode));
  w.str(m.what);
  w.bytes(m.data);
  return w.finish();
}

Bytes encode(const Result& m) {
  Writer w(MsgType::kResult);
  w.u64(m.seq);
  w.u32(static_cast<std::uint32_t>(m.blobs.size()));
  for (const Bytes& b : m.blobs) w.bytes(b);
  return w.finish();
}

Bytes encode(const Abort& m) {
  Writer w(MsgType::kAbort);
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.str(m.reason);
  return w.finish();
}

Bytes encode(const Layout& m) {
  Writer w(MsgType::kLayout);
  w.u64(m.seq);
  w.u32(m.local_rank);
  w.u32(m.local_size);
  w.u32(m.host_count);
  w.str(m.root_host);
  w.u32(static_cast<std::uint32_t>(m.hosts.size()));
  for (const auto& h : m.hosts) w.str(h);
  return w.finish();
}

Bytes encode(const Put& m) {
  Writer w(MsgType::kPut);
  w.str(m.key);
  w.bytes(m.value);
  return w.finish();
}

Bytes encode(const Get& m) {
  Writer w(MsgType::kGet);
  w.u64(m.seq);
  w.str(m.key);
  w.u32(static_cast<std::uint32_t>(m.ranks.size()));
  for (const auto r : m.ranks) w.u32(r);
  return w.finish();
}

Bytes encode(const Values& m) {
  Writer w(MsgType::kValues);
  w.u64(m.seq);
  w.str(m.error);
  w.u32(static_cast<std::uint32_t>(m.values.size()));
  for (const Bytes& b : m.values) w.bytes(b);
  return w.finish();
}

Bytes encode_refused(const std::string& reason) {
  Writer w(MsgType::kRefused);
  w.str(reason);
  return w.finish();
}

Bytes encode_empty(MsgType type) { return Writer(type).finish(); }

Hello decode_hello(std::span<const std::byte> payload) {
  Reader r(payload, "hello");
  Hello m;
  m.token = r.str();
  m.rank = r.u32();
  m.size = r.u32();
  m.host = r.str();
  r.done();
  return m;
}

Contrib decode_contrib(std::span<const std::byte> payload) {
  Reader r(payload, "contribution");
  Contrib m;
  m.seq = r.u64();
  const std::uint8_t mode = r.u8();
  if (mode > static_cast<std::uint8_t>(RoundMode::kBroadcast)) {
    throw ProtocolError(fmt::format("bootstrap protocol: unknown round mode {}", mode));
  }
  m.mode = static_cast<RoundMode>(mode);
  m.what = r.str();
  m.data = r.bytes();
  r.done();
  return m;
}

Result decode_result(std::span<const std::byte> payload) {
  Reader r(payload, "result");
  Result m;
  m.seq = r.u64();
  const std::uint32_t count = r.u32();
  // Each blob needs at least its 4-byte length: bound the count before reserving.
  if (count > r.left() / 4) throw ProtocolError("bootstrap protocol: result count exceeds payload");
  m.blobs.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) m.blobs.push_back(r.bytes());
  r.done();
  return m;
}

Layout decode_layout(std::span<const std::byte> payload) {
  Reader r(payload, "layout");
  Layout m;
  m.seq = r.u64();
  m.local_rank = r.u32();
  m.local_size = r.u32();
  m.host_count = r.u32();
  m.root_host = r.str();
  const std::uint32_t count = r.u32();
  if (count > r.left() / 4)
    throw ProtocolError("bootstrap protocol: truncated layout message (count exceeds payload)");
  m.hosts.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) m.hosts.push_back(r.str());
  r.done();
  return m;
}

Put decode_put(std::span<const std::byte> payload) {
  Reader r(payload, "put");
  Put m;
  m.key = r.str();
  m.value = r.bytes();
  r.done();
  return m;
}

Get decode_get(std::span<const std::byte> payload) {
  Reader r(payload, "get");
  Get m;
  m.seq = r.u64();
  m.key = r.str();
  const std::uint32_t count = r.u32();
  if (count > r.left() / 4)
    throw ProtocolError("bootstrap protocol: truncated get message (count exceeds payload)");
  m.ranks.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) m.ranks.push_back(r.u32());
  r.done();
  return m;
}

Values decode_values(std::span<const std::byte> payload) {
  Reader r(payload, "values");
  Values m;
  m.seq = r.u64();
  m.error = r.str();
  const std::uint32_t count = r.u32();
  if (count > r.left() / 4)
    throw ProtocolError("bootstrap protocol: truncated values message (count exceeds payload)");
  m.values.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) m.values.push_back(r.bytes());
  r.done();
  return m;
}

Abort decode_abort(std::span<const std::byte> payload) {
  Reader r(payload, "abort");
  Abort m;
  const std::uint8_t kind = r.u8();
  m.kind = kind == static_cast<std::uint8_t>(AbortKind::kTimeout) ? AbortKind::kTimeout
                                                                  : AbortKind::kRemote;
  m.reason = r.str();
  r.done();
  return m;
}

std::string decode_refused(std::span<const std::byte> payload) {
  Reader r(payload, "refused");
  std::string s = r.str();
  r.done();
  return s;
}

}  // namespace ibscope::bootstrap::wire
