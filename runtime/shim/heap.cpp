#include "shim/heap.h"

#ifdef GCR_SHIM_HEAP
#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "base/size_class_heap.h"

namespace {

constexpr std::size_t kRegionBytes = gcr::SizeClassHeap::kSlabBytes * gcr::SizeClassHeap::kMaxSlabs;

// Constant-initialized: no static initializer runs before main, and a block allocated before
// start() (none is owned) goes to malloc.
constinit gcr::SizeClassHeap heap;

}  // namespace

namespace gcr {

void start_create_heap() noexcept {
  void* region = ::mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) return;
  // Small pages: where transparent huge pages are always on, a class's first block would
  // otherwise have 2 MiB zeroed.
  (void)::madvise(region, kRegionBytes, MADV_NOHUGEPAGE);
  heap.start(region, kRegionBytes);
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

}  // namespace gcr

#endif
