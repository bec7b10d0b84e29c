#include "tensor/storage.h"

#include <cstdlib>
#include <new>

namespace minigrad {

namespace {
constexpr size_t kAlignment = 64;
}

Storage::Storage(size_t nbytes) : nbytes_(nbytes) {
  if (nbytes <= kInlineBytes) {
    data_ = inline_;
    return;
  }
  // aligned_alloc wants a size that is a multiple of the alignment.
  const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  data_ = std::aligned_alloc(kAlignment, rounded);
  if (data_ == nullptr) throw std::bad_alloc();
}

Storage::~Storage() {
  if (data_ != inline_) std::free(data_);
}

}  // namespace minigrad
