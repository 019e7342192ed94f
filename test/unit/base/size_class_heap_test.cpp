#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "base/size_class_heap.h"

namespace {

using gcr::SizeClassHeap;
constexpr std::size_t kSlab = SizeClassHeap::kSlabBytes;

// A region of `slabs` slabs, aligned as mmap's would be.
struct Region {
  explicit Region(std::size_t slabs) : bytes((slabs + 4) * kSlab) {}
  [[nodiscard]] std::uintptr_t base() const {
    return (reinterpret_cast<std::uintptr_t>(bytes.data()) + 4095) / 4096 * 4096;
  }
  [[nodiscard]] void* start() const { return reinterpret_cast<void*>(base()); }
  [[nodiscard]] std::size_t size() const { return bytes.size() - 4 * kSlab; }
  std::vector<unsigned char> bytes;
};

std::uintptr_t address(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

const void* at(std::uintptr_t a) {
  return reinterpret_cast<const void*>(a);
}

// Makes the block at `at` look like the last one of a free list (its link mangled from 0).
void end_list_at(std::uintptr_t at) {
  const std::uintptr_t end = at >> 12;
  std::memcpy(reinterpret_cast<void*>(at), &end, sizeof end);
}

// Whether `use`, given a heap started on `region`, stops the process with abort(): run in a
// child, where doctest's handler does not report the signal.
template <typename Use>
bool aborts(const Region& region, Use use) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::signal(SIGABRT, SIG_DFL);
    ::signal(SIGSEGV, SIG_DFL);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    SizeClassHeap heap;
    heap.start(region.start(), region.size());
    use(heap);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

}  // namespace

TEST_SUITE("size class heap") {
  TEST_CASE("before it starts it hands out nothing and owns nothing") {
    SizeClassHeap heap;
    CHECK(heap.allocate(8) == nullptr);
    CHECK(heap.slabs() == 0);
    int on_stack = 0;
    CHECK_FALSE(heap.owns(&on_stack));
  }

  TEST_CASE(
      "each class's first block opens the next slab; blocks are aligned and as large as "
      "asked") {
    Region region(64);
    SizeClassHeap heap;
    heap.start(region.start(), region.size());
    std::size_t slab = 0;
    for (std::size_t size : {1, 16, 17, 100, 240, 256, 0}) {
      void* block = heap.allocate(size);
      REQUIRE(block != nullptr);
      CHECK(heap.owns(block));
      CHECK(address(block) % SizeClassHeap::kGrain == 0);
      std::memset(block, 0xab, size);
      if (size == 16 || size == 0) {  // the class of size 1, whose slab is the first
        CHECK(address(block) == region.base() + (size == 16 ? 16 : 32));
        continue;
      }
      CHECK(address(block) == region.base() + slab * kSlab);
      ++slab;
    }
    // Two of a class lie a whole block apart.
    void* a = heap.allocate(40);
    void* b = heap.allocate(48);
    CHECK(address(b) - address(a) == 48);
  }

  TEST_CASE("larger blocks are left to the caller") {
    Region region(64);
    SizeClassHeap heap;
    heap.start(region.start(), region.size());
    CHECK(heap.allocate(SizeClassHeap::kLargestBlock + 1) == nullptr);
    CHECK(heap.allocate(1 << 20) == nullptr);
  }

  TEST_CASE("a released block serves its class again, last released first") {
    Region region(64);
    SizeClassHeap heap;
    heap.start(region.start(), region.size());
    void* a = heap.allocate(24);
    void* b = heap.allocate(24);
    void* other = heap.allocate(200);
    heap.release(a);
    heap.release(b);
    heap.release(other);
    CHECK(heap.allocate(32) == b);
    CHECK(heap.allocate(17) == a);
    CHECK(heap.allocate(193) == other);
    // The list is used up: a fresh block follows b.
    CHECK(address(heap.allocate(30)) == address(b) + 32);
  }

  TEST_CASE("a block of a class's later slab goes back to that class") {
    Region region(64);
    SizeClassHeap heap;
    heap.start(region.start(), region.size());
    std::vector<void*> large;
    for (int i = 0; i < 4; ++i) large.push_back(heap.allocate(256));  // slab 0, full
    void* small = heap.allocate(16);                                  // slab 1
    void* fifth = heap.allocate(256);                                 // slab 2
    CHECK(address(small) == region.base() + kSlab);
    CHECK(address(fifth) == region.base() + 2 * kSlab);
    heap.release(fifth);
    heap.release(small);
    CHECK(heap.allocate(250) == fifth);
    CHECK(heap.allocate(1) == small);
    CHECK(heap.slabs_taken() == 3);  // blocks reused take no slab
    CHECK(heap.slabs() == 64);
  }

  TEST_CASE("with the region used up, a class whose slab is full answers nothing") {
    Region region(2);
    SizeClassHeap heap;
    heap.start(region.start(), region.size());
    std::vector<void*> blocks;
    while (void* block = heap.allocate(256)) blocks.push_back(block);
    CHECK(blocks.size() == 2 * kSlab / 256);
    CHECK(heap.allocate(16) == nullptr);  // no slab left for its class either
    heap.release(blocks.back());
    CHECK(heap.allocate(256) == blocks.back());
    CHECK(heap.allocate(256) == nullptr);
  }

  TEST_CASE("a region smaller than a slab is not used") {
    Region region(1);
    SizeClassHeap heap;
    heap.start(region.start(), kSlab - 1);
    CHECK(heap.allocate(8) == nullptr);
    CHECK_FALSE(heap.owns(region.start()));
  }

  TEST_CASE("a free block does not hold the next one's address in the clear") {
    Region region(64);
    SizeClassHeap heap;
    heap.start(region.start(), region.size());
    void* a = heap.allocate(64);
    void* b = heap.allocate(64);
    heap.release(a);
    heap.release(b);
    std::uintptr_t held = 0;
    std::memcpy(&held, b, sizeof held);
    CHECK(held != address(a));
    CHECK(heap.allocate(64) == b);
    CHECK(heap.allocate(64) == a);
  }

  TEST_CASE("a free block written over stops the process when its turn comes") {
    // What the freed block is made to point to: outside the region, another class's block, a
    // block's middle. The list's end (0) and the block freed before it (its true next) are
    // taken.
    Region region(64);
    const std::uintptr_t base = region.base();
    // `ends_list`: the target made to look like the list's last free block, so that only the
    // check of the link to it can stop the process.
    const auto overwritten_then_allocated = [&](std::uintptr_t target, bool ends_list = false) {
      return aborts(region, [target, ends_list](SizeClassHeap& heap) {
        void* a = heap.allocate(64);
        void* b = heap.allocate(64);
        (void)heap.allocate(16);  // slab 1: another class
        heap.release(b);
        heap.release(a);
        const std::uintptr_t forged = (address(a) >> 12) ^ target;
        std::memcpy(a, &forged, sizeof forged);
        if (ends_list) end_list_at(target);
        (void)heap.allocate(64);
        (void)heap.allocate(64);
      });
    };
    CHECK(overwritten_then_allocated(base + 100 * kSlab));
    CHECK(overwritten_then_allocated(base + kSlab));
    CHECK(overwritten_then_allocated(base + 64 + 8, true));
    CHECK(overwritten_then_allocated(base - 64));
    CHECK(overwritten_then_allocated(base + 128, true));  // of its class, never handed out
    CHECK_FALSE(overwritten_then_allocated(0));
    CHECK_FALSE(overwritten_then_allocated(base + 64));
  }

  TEST_CASE("a free block's link to a block that would cross its slab's end stops the process") {
    // 21 blocks of 48 bytes fill 1,008 bytes of a slab; the 22nd opens the next. A link to
    // offset 1,008 names a block whose end lies in the next slab.
    Region region(64);
    const auto linked_to = [&](std::size_t offset) {
      return aborts(region, [&region, offset](SizeClassHeap& heap) {
        std::vector<void*> blocks;
        for (int i = 0; i < 22; ++i) blocks.push_back(heap.allocate(48));
        heap.release(blocks[1]);
        heap.release(blocks[0]);
        const std::uintptr_t forged = (address(blocks[0]) >> 12) ^ (region.base() + offset);
        std::memcpy(blocks[0], &forged, sizeof forged);
        end_list_at(region.base() + offset);
        (void)heap.allocate(48);
        (void)heap.allocate(48);
      });
    };
    CHECK(linked_to(1008));
    CHECK_FALSE(linked_to(48));
  }

  TEST_CASE("a block freed again, or a pointer into a block, stops the process") {
    Region region(64);
    const auto freed = [&](int second) {  // 0: b, 1: a again, 2: a after b, 3: into a
      return aborts(region, [second](SizeClassHeap& heap) {
        auto* a = static_cast<unsigned char*>(heap.allocate(32));
        void* b = heap.allocate(32);
        heap.release(a);
        if (second == 2) heap.release(b);
        heap.release(second == 0 ? b : second == 3 ? a + 16 : a);
      });
    };
    CHECK_FALSE(freed(0));
    CHECK(freed(1));
    CHECK(freed(2));
    CHECK(freed(3));
    // Taken again, a block may be freed again; a block in use that happens to hold what a free
    // block holds after its link is not taken for a free one.
    CHECK_FALSE(aborts(region, [](SizeClassHeap& heap) {
      auto* a = static_cast<unsigned char*>(heap.allocate(32));
      auto* b = static_cast<unsigned char*>(heap.allocate(32));
      heap.release(b);
      std::uintptr_t mark = 0;
      std::memcpy(&mark, b + sizeof mark, sizeof mark);
      void* again = heap.allocate(32);  // b
      std::memcpy(a + sizeof mark, &mark, sizeof mark);
      heap.release(again);
      heap.release(a);
    }));
  }

  TEST_CASE("blocks outside the region are not its own") {
    Region region(64);
    SizeClassHeap heap;
    heap.start(region.start(), region.size());
    const std::uintptr_t base = region.base();
    CHECK(heap.owns(at(base)));
    CHECK(heap.owns(at(base + 64 * kSlab - 1)));
    CHECK_FALSE(heap.owns(at(base + 64 * kSlab)));
    CHECK_FALSE(heap.owns(at(base - 1)));
  }

  TEST_CASE("a region larger than the slabs it can track is used up to them") {
    Region region(SizeClassHeap::kMaxSlabs + 8);
    SizeClassHeap heap;
    heap.start(region.start(), region.size());
    CHECK(heap.owns(at(region.base() + SizeClassHeap::kMaxSlabs * kSlab - 1)));
    CHECK_FALSE(heap.owns(at(region.base() + SizeClassHeap::kMaxSlabs * kSlab)));
  }
}
