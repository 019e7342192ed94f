#include "base/size_class_heap.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gcr {

namespace {

// Bit k of kBlockStarts[c]: a block of class c starts at byte k * kGrain of a slab and ends in it
// (a table, so that the check takes no division).
constexpr auto kBlockStarts = [] {
  std::array<std::uint64_t, SizeClassHeap::kClasses> starts{};
  for (std::size_t c = 0; c < SizeClassHeap::kClasses; ++c) {
    const std::size_t block = (c + 1) * SizeClassHeap::kGrain;
    for (std::size_t at = 0; at + block <= SizeClassHeap::kSlabBytes; at += block)
      starts[c] |= std::uint64_t{1} << (at / SizeClassHeap::kGrain);
  }
  return starts;
}();
static_assert(SizeClassHeap::kSlabBytes / SizeClassHeap::kGrain == 64);

}  // namespace

// Inlined where it is called: it runs for every block taken from a free list and every block freed.
[[gnu::always_inline]] inline bool SizeClassHeap::holds_block_of(std::uintptr_t at,
                                                                 std::size_t c) const noexcept {
  const std::uintptr_t offset = at - region_;
  // A class's slabs lie in the order they were taken: every block it handed out lies below
  // its next fresh one.
  if (offset >= slabs_used_ * kSlabBytes || at >= fresh_[c]) return false;
  const std::uintptr_t in_slab = offset % kSlabBytes;
  return slab_class_[offset / kSlabBytes] == c && in_slab % kGrain == 0 &&
         ((kBlockStarts[c] >> (in_slab / kGrain)) & 1) != 0;
}

void SizeClassHeap::start(void* region, std::size_t size) noexcept {
  region_ = reinterpret_cast<std::uintptr_t>(region);
  slabs_ = std::min(size / kSlabBytes, kMaxSlabs);
  slabs_used_ = 0;
  fresh_.fill(0);
  slab_end_.fill(0);
  free_.fill(0);
  // Where the kernel put the region (randomized) makes each process's mark its own.
  free_mark_ = region_ ^ 0x6a09e667f3bcc908ULL;
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
    const std::uintptr_t no_mark = 0;
    std::memcpy(reinterpret_cast<void*>(block + sizeof next), &no_mark, sizeof no_mark);
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

bool SizeClassHeap::on_free_list(std::uintptr_t at, std::size_t c) const noexcept {
  // A list no longer than the blocks there are: a link written over into a loop ends too.
  std::size_t left = slabs_used_ * kSlabBytes / kGrain;
  for (std::uintptr_t block = free_[c]; block != 0 && left-- > 0;) {
    if (block == at) return true;
    std::uintptr_t next = 0;
    std::memcpy(&next, reinterpret_cast<const void*>(block), sizeof next);
    block = mangle(block, next);
    if (block != 0 && !holds_block_of(block, c)) std::abort();
  }
  return false;
}

void SizeClassHeap::release(void* block) noexcept {
  const auto at = reinterpret_cast<std::uintptr_t>(block);
  const std::size_t c = slab_class_[(at - region_) / kSlabBytes];
  // A pointer into a block, or a block already free (which would be handed out twice):
  // stopped, as glibc stops them.
  std::uintptr_t mark = 0;
  std::memcpy(&mark, reinterpret_cast<const void*>(at + sizeof mark), sizeof mark);
  if (!holds_block_of(at, c) || (mark == free_mark_ && on_free_list(at, c))) std::abort();
  const std::uintptr_t link[2] = {mangle(at, free_[c]), free_mark_};
  std::memcpy(block, link, sizeof link);
  free_[c] = at;
}

}  // namespace gcr
