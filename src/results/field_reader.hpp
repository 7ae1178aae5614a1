#pragma once
// Private to src/results/: typed reads of a parsed results file's fields, every error a
// UsageError "<source>: <JSON path>: <what>". Readers run after the schema check, so these
// errors are for what the schema leaves open (integers out of their field's range, open objects).

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "ibscope/core/error.hpp"

namespace ibscope::results {

class FieldReader {
 public:
  explicit FieldReader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw UsageError(fmt::format("{}: {}: {}", source_, path, what));
  }

  const nlohmann::json& at(const nlohmann::json& obj, const std::string& path,
                           const char* key) const {
    if (!obj.is_object()) fail(path, fmt::format("expected an object, got {}", obj.type_name()));
    const auto it = obj.find(key);
    if (it == obj.end()) fail(join(path, key), "missing");
    return *it;
  }

  template <typename T>
  T get(const nlohmann::json& obj, const std::string& path, const char* key) const {
    return as<T>(at(obj, path, key), join(path, key));
  }

  /// `fallback` when the key is absent (fields added after files of this version were written).
  template <typename T>
  T get_or(const nlohmann::json& obj, const std::string& path, const char* key, T fallback) const {
    if (!obj.is_object() || !obj.contains(key)) return fallback;
    return get<T>(obj, path, key);
  }

  template <typename T>
  T as(const nlohmann::json& v, const std::string& path) const {
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail(path, fmt::format("expected a boolean, got {}", v.type_name()));
      return v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_number_integer()) {
        fail(path, fmt::format("expected an integer, got {}", v.type_name()));
      }
      const bool ok =
          v.is_number_unsigned()
              ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
              : v.get<std::int64_t>() >= std::int64_t{std::numeric_limits<T>::min()} &&
                    (v.get<std::int64_t>() < 0 ||
                     static_cast<std::uint64_t>(v.get<std::int64_t>()) <=
                         static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
      if (!ok) fail(path, fmt::format("{} is out of range", v.dump()));
      return v.get<T>();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) fail(path, fmt::format("expected a number, got {}", v.type_name()));
      return v.get<T>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) fail(path, fmt::format("expected a string, got {}", v.type_name()));
      return v.get<std::string>();
    } else {
      // std::vector<U>
      if (!v.is_array()) fail(path, fmt::format("expected an array, got {}", v.type_name()));
      T out;
      out.reserve(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        out.push_back(as<typename T::value_type>(v[i], fmt::format("{}[{}]", path, i)));
      }
      return out;
    }
  }

  /// A number, or NaN where the file has null (a figure that was unknown when written).
  double number_or_nan(const nlohmann::json& obj, const std::string& path, const char* key) const {
    const nlohmann::json& v = at(obj, path, key);
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    return as<double>(v, join(path, key));
  }
  double number_or_nan_or(const nlohmann::json& obj, const std::string& path, const char* key,
                          double fallback) const {
    if (!obj.is_object() || !obj.contains(key)) return fallback;
    return number_or_nan(obj, path, key);
  }

  std::string_view source() const { return source_; }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
  }

 private:
  std::string_view source_;
};

}  // namespace ibscope::results
