// The shim's small blocks, from a create onwards: see base/size_class_heap.h.
#pragma once

#include <optional>
#include <string>

namespace gcr {

// From now on, blocks of up to 256 bytes that C++ code allocates come from a size-class heap
// on a region of their own (256 KiB of the program's zero-filled data, its first 64 KiB mapped
// at the start, the rest touched as used); larger ones, and all once the region is full, from
// malloc as before. A call that may edit the bundle starts it; a pass-through call keeps malloc.
// The heap takes no lock: the shim runs one thread. Sanitized builds keep the C++ runtime's
// allocator, whose checks they are for: there it does nothing.
void start_create_heap() noexcept;

// "<n> of 256 slabs of 1 KiB", what the create took of the heap's region so far; nothing where
// the heap is not built in (sanitized builds) or not started.
std::optional<std::string> create_heap_use();

}  // namespace gcr
