#include "base/size_class_heap.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gcr {

void SizeClassHeap::start(void* region, std::size_t size) noexcept {
  region_ = reinterpret_cast<std::uintptr_t>(region);
  slabs_ = std::min(size / kSlabBytes, kMaxSlabs);
  slabs_used_ = 0;
  fresh_.fill(0);
  slab_end_.fill(0);
  free_.fill(0);
}

void* SizeClassHeap::allocate(std::size_t size) noexcept {
  if (size > kLargestBlock) return nullptr;
  const std::size_t c = size == 0 ? 0 : (size - 1) / kGrain;
  if (const std::uintptr_t block = free_[c]; block != 0) {
    std::uintptr_t next = 0;
    std::memcpy(&next, reinterpret_cast<void*>(block), sizeof next);
    next = mangle(block, next);
    // A freed block written over (a use after free, an overrun) would hand out an address of
    // the writer's choosing next: as glibc does, stop the process rather than use it.
    if (next != 0 && !holds_block_of(next, c)) std::abort();
    free_[c] = next;
    return reinterpret_cast<void*>(block);
  }
  const std::size_t block_size = (c + 1) * kGrain;
  if (slab_end_[c] - fresh_[c] < block_size) return from_new_slab(c);
  const std::uintptr_t block = fresh_[c];
  fresh_[c] += block_size;
  return reinterpret_cast<void*>(block);
}

void* SizeClassHeap::from_new_slab(std::size_t c) noexcept {
  if (slabs_used_ == slabs_) return nullptr;
  slab_class_[slabs_used_] = static_cast<std::uint8_t>(c);
  const std::uintptr_t slab = region_ + slabs_used_++ * kSlabBytes;
  fresh_[c] = slab + (c + 1) * kGrain;
  slab_end_[c] = slab + kSlabBytes;
  return reinterpret_cast<void*>(slab);
}

bool SizeClassHeap::holds_block_of(std::uintptr_t at, std::size_t c) const noexcept {
  if (at - region_ >= slabs_used_ * kSlabBytes) return false;
  const std::uintptr_t offset = at - region_;
  const std::size_t block_size = (c + 1) * kGrain;
  return slab_class_[offset / kSlabBytes] == c && (offset % kSlabBytes) % block_size == 0 &&
         offset % kSlabBytes + block_size <= kSlabBytes;
}

void SizeClassHeap::release(void* block) noexcept {
  const auto at = reinterpret_cast<std::uintptr_t>(block);
  const std::size_t c = slab_class_[(at - region_) / kSlabBytes];
  // A block freed twice in a row would be handed out twice: stopped, as glibc stops it.
  if (free_[c] == at) std::abort();
  const std::uintptr_t next = mangle(at, free_[c]);
  std::memcpy(block, &next, sizeof next);
  free_[c] = at;
}

}  // namespace gcr
