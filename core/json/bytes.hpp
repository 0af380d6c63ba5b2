// A growable byte buffer whose appends stay inline (std::string's append(ptr, n) is an
// out-of-line call into libstdc++): the one-pass canonicalizer's output and name buffers.
// Internal header: include it only from core/json/*.cpp.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

namespace idem::json::detail {

class Bytes {
 public:
  Bytes() = default;
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  ~Bytes() { std::free(data_); }

  const char* data() const { return data_; }
  char* data() { return data_; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_, size_}; }
  std::string_view view(std::size_t from, std::size_t length) const { return {data_ + from, length}; }

  void clear() { size_ = 0; }
  // Shrinks only.
  void truncate(std::size_t size) { size_ = size; }
  void reserve(std::size_t capacity) {
    if (capacity > capacity_) grow_to(capacity);
  }
  // Frees the memory (a buffer kept between calls gives back what a huge document took).
  void release() {
    std::free(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

  void push_back(char c) {
    if (size_ == capacity_) grow_to(size_ + 1);
    data_[size_++] = c;
  }
  void append(const char* p, std::size_t n) {
    if (n == 0) return;  // memcpy from or to a null pointer is undefined even for 0 bytes
    if (capacity_ - size_ < n) grow_to(size_ + n);
    std::memcpy(data_ + size_, p, n);
    size_ += n;
  }
  void append(std::string_view s) { append(s.data(), s.size()); }

 private:
  void grow_to(std::size_t needed) {
    std::size_t capacity = capacity_ < 256 ? 256 : capacity_ * 2;
    if (capacity < needed) capacity = needed;
    void* p = std::realloc(data_, capacity);
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<char*>(p);
    capacity_ = capacity;
  }

  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace idem::json::detail
