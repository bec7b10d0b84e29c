// Storage: the buffer behind one or more tensors. Views (reshape, transpose, slice) share it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace minigrad {

class Storage {
 public:
  // Uninitialized. Buffers of up to kInlineBytes live inside the Storage object itself, so a tiny tensor
  // costs one allocation (the shared_ptr's block) instead of two; glibc's aligned allocation alone costs
  // more than the rest of a tiny op. Bigger buffers are 64-byte aligned (a cache line, an AVX-512
  // register) so that kernels start aligned; those of 1 MB or more are recycled (see storage.cpp).
  explicit Storage(size_t nbytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }

  // Counts in-place writes to this buffer. Autograd records the version when it saves a tensor for
  // backward and refuses to use it if the version has moved on (PyTorch's version counter). The tensor
  // layer only bumps it; it does not know why anyone reads it.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  static constexpr size_t kInlineBytes = 64;

  void* data_ = nullptr;
  size_t nbytes_ = 0;
  size_t capacity_ = 0;  // bytes actually allocated (a size class for recycled buffers)
  uint64_t version_ = 0;
  alignas(16) std::byte inline_[kInlineBytes];  // 16-byte aligned: enough for any element type
};

}  // namespace minigrad
