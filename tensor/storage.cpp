#include "minigrad/tensor/storage.h"

#include <malloc.h>

#include <bit>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace minigrad {

namespace {

constexpr size_t kAlignment = 64;

// Large buffers are recycled rather than handed back to the system. glibc returns a block of more than
// 32 MB to the kernel when it is freed, and the next allocation of that size faults in and zeroes every
// page again: training the sentiment model spent much of its time in the kernel doing that, for the same
// few sizes, step after step (docs/performance.md, "Threads and memory"). Freed buffers of 1 MB or more
// wait here, up to 2 GiB in all. A request takes the smallest waiting buffer that holds it, however much
// bigger: its pages are mapped already, where a new buffer's would be faulted in and zeroed. (Taking
// only buffers at most twice the request, as this once did, missed on the sentiment model's attention
// weights, (batch, T, T) for a T that changes at every step: each step faulted in a fresh buffer.) A
// request that nothing holds gets a new buffer, rounded up to a size class (eight per power of two) so
// that similar sizes share them.
class BufferCache {
 public:
  static constexpr size_t kSmallest = 1 << 20;
  static constexpr size_t kLimit = size_t{2} << 30;

  // The size class a request of `bytes` is served from.
  static size_t size_class(size_t bytes) {
    const size_t step = std::bit_floor(bytes) / 8;
    return (bytes + step - 1) / step * step;
  }

  // The smallest waiting buffer of at least `bytes`, or nullptr; `capacity` gets its size.
  void* take(size_t bytes, size_t& capacity) {
    std::lock_guard lock(mutex_);
    auto it = free_.lower_bound(bytes);
    if (it == free_.end()) return nullptr;
    capacity = it->first;
    void* p = it->second;
    free_.erase(it);
    cached_ -= capacity;
    return p;
  }

  // Keeps the buffer for later, or frees it if the cache is full.
  void give(void* p, size_t bytes) {
    {
      std::lock_guard lock(mutex_);
      if (cached_ + bytes <= kLimit) {
        free_.emplace(bytes, p);
        cached_ += bytes;
        return;
      }
    }
    std::free(p);
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // by size, for best fit
  size_t cached_ = 0;
};

// glibc's malloc, set up for a training loop, once, when the library is loaded. By default glibc gives
// memory back to the kernel eagerly: a block of 128 KB or more is its own mmap (unmapped when freed), and
// free space of 128 KB or more at the top of the heap is trimmed. A training step frees and allocates the
// same sizes again and again, so each step faulted in and zeroed the same pages anew: on a chain of 1,000
// tiny ops, the backward pass's 176 KB vector of gradients alone faulted in fresh pages at every pass
// (docs/history/performance.md, "Kernel benchmarks, earlier runs"). Here blocks below 32 MB (glibc's
// largest threshold) come from the heap and up to 256 MB of free heap is kept; larger ones are recycled by
// the BufferCache above.
#ifdef __GLIBC__
const bool malloc_configured = [] {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  return true;
}();
#endif

// Never destroyed: storages may be freed during static destruction, after a cache object would be gone.
BufferCache& cache() {
  static BufferCache* instance = new BufferCache;
  return *instance;
}

}  // namespace

Storage::Storage(size_t nbytes) : nbytes_(nbytes) {
  if (nbytes <= kInlineBytes) {
    data_ = inline_;
    return;
  }
  if (nbytes >= BufferCache::kSmallest) {
    data_ = cache().take(nbytes, capacity_);
    if (data_ == nullptr) capacity_ = BufferCache::size_class(nbytes);
  } else {
    capacity_ = (nbytes + kAlignment - 1) / kAlignment * kAlignment;  // aligned_alloc wants a multiple
  }
  if (data_ == nullptr) data_ = std::aligned_alloc(kAlignment, capacity_);
  if (data_ == nullptr) throw std::bad_alloc();
}

Storage::~Storage() {
  if (data_ == inline_) return;
  if (capacity_ >= BufferCache::kSmallest) {
    cache().give(data_, capacity_);
  } else {
    std::free(data_);
  }
}

}  // namespace minigrad
