// Field types for rows held by the hundred thousand: a coordinator keeps one row per stage of
// every running run, and most of a waiting stage's text fields and its progress are empty.
// A std::string costs 32 bytes even when empty and a std::optional its whole value; these
// cost one pointer while empty and hold their value on the heap once set.
#pragma once

#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace longhaul {

// A string that costs 8 bytes while empty, and whose text, once set, is one allocation of its
// length plus five bytes (a std::string is 32 bytes, plus its text when longer than 15). Reads
// as a std::string_view (view(), or the implicit conversion); str() makes a std::string.
class LeanString {
 public:
  LeanString() = default;
  LeanString(std::string_view s) { Set(s); }                             // NOLINT: like a string
  LeanString(const std::string& s) : LeanString(std::string_view(s)) {}  // NOLINT
  LeanString(const char* s) : LeanString(std::string_view(s)) {}         // NOLINT
  LeanString(const LeanString& o) : LeanString(o.view()) {}
  LeanString(LeanString&&) noexcept = default;
  LeanString& operator=(const LeanString& o) {
    if (this != &o) Set(o.view());
    return *this;
  }
  LeanString& operator=(LeanString&&) noexcept = default;
  LeanString& operator=(std::string_view s) {
    Set(s);
    return *this;
  }
  LeanString& operator=(const std::string& s) { return *this = std::string_view(s); }
  LeanString& operator=(const char* s) { return *this = std::string_view(s); }

  std::string_view view() const {
    if (!p_) return std::string_view("", 0);  // a data pointer, as C APIs expect
    uint32_t n;
    std::memcpy(&n, p_.get(), sizeof n);
    return {p_.get() + sizeof n, n};
  }
  operator std::string_view() const { return view(); }  // NOLINT: reads as a string_view
  std::string str() const { return std::string(view()); }
  bool empty() const { return p_ == nullptr; }
  size_t size() const { return view().size(); }
  void clear() { p_.reset(); }

  friend bool operator==(const LeanString& a, const LeanString& b) { return a.view() == b.view(); }
  template <typename T>
    requires std::convertible_to<const T&, std::string_view>
  friend bool operator==(const LeanString& a, const T& b) {
    return a.view() == std::string_view(b);
  }

 private:
  void Set(std::string_view s) {
    if (s.empty()) {
      p_.reset();
      return;
    }
    auto n = static_cast<uint32_t>(s.size());
    std::unique_ptr<char[]> p(new char[sizeof n + s.size() + 1]);
    std::memcpy(p.get(), &n, sizeof n);
    std::memcpy(p.get() + sizeof n, s.data(), s.size());
    p[sizeof n + s.size()] = '\0';
    p_ = std::move(p);
  }
  std::unique_ptr<char[]> p_;
};

// std::optional's reading interface with the value on the heap: 8 bytes while empty.
template <typename T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(std::nullopt_t) {}                                        // NOLINT
  HeapOptional(T v) : p_(std::make_unique<T>(std::move(v))) {}           // NOLINT
  HeapOptional(std::optional<T> v) {                                     // NOLINT
    if (v) p_ = std::make_unique<T>(std::move(*v));
  }
  HeapOptional(const HeapOptional& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const HeapOptional& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  HeapOptional& operator=(T v) {
    if (p_) {
      *p_ = std::move(v);
    } else {
      p_ = std::make_unique<T>(std::move(v));
    }
    return *this;
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const T& operator*() const { return *p_; }
  T& operator*() { return *p_; }
  const T* operator->() const { return p_.get(); }
  T* operator->() { return p_.get(); }
  T value_or(T fallback) const { return p_ ? *p_ : std::move(fallback); }
  void reset() { p_.reset(); }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace longhaul
