// Field types for rows held by the hundred thousand: a coordinator keeps one row per stage of
// every running run, and most of a waiting stage's text fields and its progress are empty.
// A std::string costs 32 bytes even when empty and a std::optional its whole value; these
// cost one pointer while empty and hold their value on the heap once set.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace longhaul {

// A string that costs 8 bytes while empty, and whose text, once set, is one allocation of its
// length plus eight bytes (a std::string is 32 bytes, plus its text when longer than 15). The
// text never changes in place, so a copy shares it (a reference count, atomic: rows are copied
// between threads): the same wait reason given to 100,000 stages is held once. Reads as a
// std::string_view (view(), or the implicit conversion); str() makes a std::string.
class LeanString {
 public:
  LeanString() = default;
  LeanString(std::string_view s) { Set(s); }                             // NOLINT: like a string
  LeanString(const std::string& s) : LeanString(std::string_view(s)) {}  // NOLINT
  LeanString(const char* s) : LeanString(std::string_view(s)) {}         // NOLINT
  LeanString(const LeanString& o) : p_(o.p_) { Ref(); }
  LeanString(LeanString&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  ~LeanString() { Unref(); }
  LeanString& operator=(const LeanString& o) {
    if (p_ != o.p_) {
      Unref();
      p_ = o.p_;
      Ref();
    }
    return *this;
  }
  LeanString& operator=(LeanString&& o) noexcept {
    if (this != &o) {
      Unref();
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  LeanString& operator=(std::string_view s) {
    Set(s);
    return *this;
  }
  LeanString& operator=(const std::string& s) { return *this = std::string_view(s); }
  LeanString& operator=(const char* s) { return *this = std::string_view(s); }

  std::string_view view() const {
    if (!p_) return std::string_view("", 0);  // a data pointer, as C APIs expect
    return {Text(p_), p_->size};
  }
  operator std::string_view() const { return view(); }  // NOLINT: reads as a string_view
  std::string str() const { return std::string(view()); }
  bool empty() const { return p_ == nullptr; }
  size_t size() const { return p_ ? p_->size : 0; }
  void clear() {
    Unref();
    p_ = nullptr;
  }
  // True when this and `o` hold the same allocation (a copy of one another).
  bool SharesWith(const LeanString& o) const { return p_ != nullptr && p_ == o.p_; }

  friend bool operator==(const LeanString& a, const LeanString& b) {
    return a.p_ == b.p_ || a.view() == b.view();
  }
  template <typename T>
    requires std::convertible_to<const T&, std::string_view>
  friend bool operator==(const LeanString& a, const T& b) {
    return a.view() == std::string_view(b);
  }

 private:
  // The header; the text follows it in the same allocation.
  struct Block {
    std::atomic<uint32_t> refs;
    uint32_t size;
  };
  static_assert(sizeof(Block) == 8);
  static char* Text(Block* b) { return reinterpret_cast<char*>(b + 1); }

  void Ref() {
    if (p_) p_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void Unref() {
    if (p_ && p_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      p_->~Block();
      ::operator delete(p_);
    }
  }
  void Set(std::string_view s) {
    Block* old = p_;
    p_ = nullptr;
    if (!s.empty()) {
      // No terminating NUL: the text is read through its size only.
      void* mem = ::operator new(sizeof(Block) + s.size());
      p_ = new (mem) Block{{1}, static_cast<uint32_t>(s.size())};
      std::memcpy(Text(p_), s.data(), s.size());
    }
    // After the copy: `s` may be this string's own text.
    if (old != nullptr && old->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      old->~Block();
      ::operator delete(old);
    }
  }
  Block* p_ = nullptr;
};

// An optional int64_t in 8 bytes (std::optional<int64_t> takes 16): INT64_MIN stands for
// "none", a value no time, id or step stored here takes. std::optional's interface, and it
// converts both ways.
class OptInt64 {
 public:
  OptInt64() = default;
  OptInt64(std::nullopt_t) {}                                       // NOLINT
  OptInt64(int64_t v) : v_(v) {}                                    // NOLINT
  OptInt64(const std::optional<int64_t>& v) : v_(v ? *v : kNone) {}  // NOLINT
  template <std::integral I>
    requires(!std::same_as<I, int64_t> && !std::same_as<I, bool>)
  OptInt64(I v) : v_(static_cast<int64_t>(v)) {}  // NOLINT
  OptInt64& operator=(std::nullopt_t) {
    v_ = kNone;
    return *this;
  }
  operator std::optional<int64_t>() const {  // NOLINT: reads as a std::optional
    return has_value() ? std::optional<int64_t>(v_) : std::nullopt;
  }

  bool has_value() const { return v_ != kNone; }
  explicit operator bool() const { return has_value(); }
  int64_t operator*() const { return v_; }
  int64_t value() const {
    if (!has_value()) throw std::bad_optional_access();
    return v_;
  }
  int64_t value_or(int64_t fallback) const { return has_value() ? v_ : fallback; }
  void reset() { v_ = kNone; }
  int64_t& emplace(int64_t v) { return v_ = v; }

  friend bool operator==(const OptInt64& a, const OptInt64& b) { return a.v_ == b.v_; }
  friend bool operator==(const OptInt64& a, std::nullopt_t) { return !a.has_value(); }
  friend bool operator==(const OptInt64& a, int64_t b) { return a.has_value() && a.v_ == b; }
  friend bool operator==(const OptInt64& a, const std::optional<int64_t>& b) {
    return a == OptInt64(b);
  }

 private:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  int64_t v_ = kNone;
};

// A string from a small set that never grows large (a stage's kind, a plan's action): 8 bytes,
// a pointer to the one copy of each value, which is kept for the life of the process. Not for
// text that varies from stage to stage.
class InternedString {
 public:
  InternedString() : p_(&Empty()) {}
  InternedString(std::string_view s) : p_(&Intern(s)) {}  // NOLINT: like a string
  InternedString(const std::string& s) : InternedString(std::string_view(s)) {}  // NOLINT
  InternedString(const char* s) : InternedString(std::string_view(s)) {}         // NOLINT
  InternedString& operator=(std::string_view s) {
    p_ = &Intern(s);
    return *this;
  }
  InternedString& operator=(const std::string& s) { return *this = std::string_view(s); }
  InternedString& operator=(const char* s) { return *this = std::string_view(s); }

  const std::string& str() const { return *p_; }
  operator const std::string&() const { return *p_; }  // NOLINT: reads as a string
  operator std::string_view() const { return *p_; }    // NOLINT
  std::string_view view() const { return *p_; }
  bool empty() const { return p_->empty(); }
  size_t size() const { return p_->size(); }
  const char* c_str() const { return p_->c_str(); }

  friend bool operator==(const InternedString& a, const InternedString& b) { return a.p_ == b.p_; }
  template <typename T>
    requires std::convertible_to<const T&, std::string_view>
  friend bool operator==(const InternedString& a, const T& b) {
    return a.view() == std::string_view(b);
  }

 private:
  static const std::string& Empty() {
    static const std::string kEmpty;
    return kEmpty;
  }
  // The one copy of `s` (Empty() for ""); thread-safe. Defined in core/compact_fields.cc.
  static const std::string& Intern(std::string_view s);
  const std::string* p_;
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

// A std::map held on the heap: 8 bytes while empty (a std::map is 48). Reads as a const
// std::map (get(), or the implicit conversion); a copy is deep.
template <typename K, typename V>
class HeapMap {
 public:
  using Map = std::map<K, V>;
  using const_iterator = typename Map::const_iterator;
  using value_type = typename Map::value_type;

  HeapMap() = default;
  HeapMap(Map m) { *this = std::move(m); }  // NOLINT: like a map
  HeapMap(std::initializer_list<value_type> values) : HeapMap(Map(values)) {}
  HeapMap(const HeapMap& o) : p_(o.p_ ? std::make_unique<Map>(*o.p_) : nullptr) {}
  HeapMap(HeapMap&&) noexcept = default;
  HeapMap& operator=(const HeapMap& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<Map>(*o.p_) : nullptr;
    return *this;
  }
  HeapMap& operator=(HeapMap&&) noexcept = default;
  HeapMap& operator=(Map m) {
    if (m.empty()) {
      p_.reset();
    } else {
      p_ = std::make_unique<Map>(std::move(m));
    }
    return *this;
  }
  HeapMap& operator=(std::initializer_list<value_type> values) { return *this = Map(values); }

  const Map& get() const { return p_ ? *p_ : Empty(); }
  operator const Map&() const { return get(); }  // NOLINT: reads as a map
  V& operator[](const K& key) { return Mutable()[key]; }
  const V& at(const K& key) const { return get().at(key); }
  const_iterator find(const K& key) const { return get().find(key); }
  const_iterator begin() const { return get().begin(); }
  const_iterator end() const { return get().end(); }
  size_t count(const K& key) const { return get().count(key); }
  bool empty() const { return get().empty(); }
  size_t size() const { return get().size(); }
  void clear() { p_.reset(); }

  friend bool operator==(const HeapMap& a, const HeapMap& b) { return a.get() == b.get(); }
  friend bool operator==(const HeapMap& a, const Map& b) { return a.get() == b; }

 private:
  static const Map& Empty() {
    static const Map kEmpty;
    return kEmpty;
  }
  Map& Mutable() {
    if (!p_) p_ = std::make_unique<Map>();
    return *p_;
  }
  std::unique_ptr<Map> p_;
};

}  // namespace longhaul
