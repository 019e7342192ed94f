// A heap for a process that lives a few milliseconds and frees as much as it allocates (the
// shim's create): blocks of up to 256 bytes in 16 size classes, carved from slabs of 1 KiB of
// one region, a slab per class at a time, and reused through a free list per class. Nothing is
// coalesced or given back: the region bounds what it holds. A block too large, or one the
// region has no room left for, is the caller's to take elsewhere (malloc).
//
// Why: glibc's malloc keeps 7 free blocks of a size at hand; a create allocates about 6,100
// blocks and frees most of them in bursts (JSON trees, path lists), so most calls went the
// long way, about 90 instructions each and 28% of the create's. Here a call is about 20 to 30,
// its checks included.
// Slabs are small and handed out in order so that a create touches about as many pages as
// malloc's heap would: on a VM each page's first touch costs 10 to 40 microseconds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace gcr {

class SizeClassHeap {
 public:
  static constexpr std::size_t kGrain = 16;  // block sizes are multiples of it, and alignment
  static constexpr std::size_t kClasses = 16;
  static constexpr std::size_t kLargestBlock = kGrain * kClasses;
  static constexpr std::size_t kSlabBytes = 1024;
  static constexpr std::size_t kMaxSlabs = 256;  // a region of 256 KiB at most is used

  // Starts handing out blocks of `region` (`size` bytes, aligned to kSlabBytes), which it never
  // gives back; before, every allocate() answers nullptr.
  void start(void* region, std::size_t size) noexcept;
  // A block of at least `size` bytes aligned to kGrain, or nullptr: larger than kLargestBlock,
  // no slab left for its class, or not started.
  [[nodiscard]] void* allocate(std::size_t size) noexcept;
  // Whether `block` came from allocate(): from the region.
  [[nodiscard]] bool owns(const void* block) const noexcept {
    return reinterpret_cast<std::uintptr_t>(block) - region_ < slabs_ * kSlabBytes;
  }
  // Takes back a block allocate() gave: it serves the next allocation of its class. A block
  // already free, a pointer into a block, or a freed block found written over when its turn
  // comes stops the process (std::abort).
  void release(void* block) noexcept;
  // Slabs in the region (0 before start()), and those handed to a class so far.
  [[nodiscard]] std::size_t slabs() const noexcept { return slabs_; }
  [[nodiscard]] std::size_t slabs_taken() const noexcept { return slabs_used_; }

 private:
  // A free block holds the next one's address, mangled with its own as glibc does (an overrun
  // into a free block does not give an attacker a pointer it chose), then free_mark_.
  static std::uintptr_t mangle(std::uintptr_t at, std::uintptr_t next) noexcept {
    return (at >> 12) ^ next;
  }
  void* from_new_slab(std::size_t c) noexcept;
  // Whether `at` is the start of a block class `c` has handed out.
  [[nodiscard]] bool holds_block_of(std::uintptr_t at, std::size_t c) const noexcept;
  // Whether the block at `at` is on class `c`'s free list: asked only when it holds free_mark_
  // (which a block in use holds by chance at most).
  [[nodiscard]] bool on_free_list(std::uintptr_t at, std::size_t c) const noexcept;

  std::uintptr_t region_ = 0;
  std::size_t slabs_ = 0;       // slabs in the region
  std::size_t slabs_used_ = 0;  // slabs handed to a class, from the region's start
  std::array<std::uintptr_t, kClasses> fresh_{};  // each class's next block never handed out
  std::array<std::uintptr_t, kClasses> slab_end_{};
  std::array<std::uintptr_t, kClasses> free_{};  // each class's last freed block, or 0
  std::uintptr_t free_mark_ = 0;                 // a free block's second word
  std::array<std::uint8_t, kMaxSlabs> slab_class_{};
};

}  // namespace gcr
