#include "shim/heap.h"

#ifdef GCR_SHIM_HEAP
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "base/size_class_heap.h"

namespace {

// The region: in the program's zero-filled data, so that the region lies where address
// randomization puts the program. A create takes 70 to 120 slabs, from the region's start; the
// region is too small for the kernel to give it a huge page.
constexpr std::size_t kRegionBytes = gcr::SizeClassHeap::kSlabBytes * gcr::SizeClassHeap::kMaxSlabs;
// What every create takes, whose pages one system call maps at the start: on a VM that traps
// each page fault to the hypervisor, touching 16 fresh pages one by one cost 140 us, mapping
// them first 65 us (docs/speed.md). The rest are touched as slabs are taken.
constexpr std::size_t kPrefaultBytes = 64 * 1024;
alignas(gcr::SizeClassHeap::kSlabBytes) unsigned char region[kRegionBytes];

// Constant-initialized: no static initializer runs before main, and a block allocated before
// start() (none is owned) goes to malloc.
constinit gcr::SizeClassHeap heap;

}  // namespace

namespace gcr {

void start_create_heap() noexcept {
  heap.start(region, kRegionBytes);
  // From the first page boundary in the region (madvise takes whole pages). Kernels before 5.14
  // refuse MADV_POPULATE_WRITE: the pages are then touched as used, as before.
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto from = (reinterpret_cast<std::uintptr_t>(region) + page - 1) & ~(page - 1);
  (void)::madvise(reinterpret_cast<void*>(from), kPrefaultBytes, MADV_POPULATE_WRITE);
}

std::optional<std::string> create_heap_use() {
  if (heap.slabs() == 0) return std::nullopt;
  return std::to_string(heap.slabs_taken()) + " of " + std::to_string(heap.slabs()) +
         " slabs of 1 KiB";
}

}  // namespace gcr

// The C++ runtime's other forms (arrays, nothrow, sized) call these two.
void* operator new(std::size_t size) {
  if (void* block = heap.allocate(size)) return block;
  for (;;) {
    if (void* block = std::malloc(size == 0 ? 1 : size)) return block;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void operator delete(void* block) noexcept {
  if (heap.owns(block)) {
    heap.release(block);
  } else {
    std::free(block);
  }
}

void operator delete(void* block, std::size_t) noexcept {
  operator delete(block);
}

#else

namespace gcr {

void start_create_heap() noexcept {}

std::optional<std::string> create_heap_use() {
  return std::nullopt;
}

}  // namespace gcr

#endif
