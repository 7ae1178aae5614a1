#include "ibscope/core/file_api.hpp"

#include <unistd.h>

#include <cstdio>

namespace ibscope {
namespace {
FileApi* g_file_api = nullptr;
}  // namespace

ssize_t FileApi::write(int fd, const void* data, std::size_t bytes) {
  return ::write(fd, data, bytes);
}
int FileApi::fsync(int fd) { return ::fsync(fd); }
int FileApi::link(const char* existing, const char* new_path) { return ::link(existing, new_path); }
int FileApi::rename(const char* from, const char* to) { return ::rename(from, to); }

ScopedFileApi::ScopedFileApi(FileApi& replacement) noexcept : previous_(g_file_api) {
  g_file_api = &replacement;
}
ScopedFileApi::~ScopedFileApi() { g_file_api = previous_; }

namespace file_calls {
ssize_t write(int fd, const void* data, std::size_t bytes) {
  return g_file_api != nullptr ? g_file_api->write(fd, data, bytes) : ::write(fd, data, bytes);
}
int fsync(int fd) { return g_file_api != nullptr ? g_file_api->fsync(fd) : ::fsync(fd); }
int link(const char* existing, const char* new_path) {
  return g_file_api != nullptr ? g_file_api->link(existing, new_path) : ::link(existing, new_path);
}
int rename(const char* from, const char* to) {
  return g_file_api != nullptr ? g_file_api->rename(from, to) : ::rename(from, to);
}
}  // namespace file_calls

}  // namespace ibscope
