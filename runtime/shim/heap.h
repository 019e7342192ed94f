// The shim's small blocks, from a create onwards: see base/size_class_heap.h.
#pragma once

namespace gcr {

// From now on, blocks of up to 256 bytes that C++ code allocates come from a size-class heap
// on a region of their own (4 MiB reserved, touched as used); larger ones, and all when the
// region cannot be had, from malloc as before. A call that may edit the bundle makes it: a
// pass-through call allocates too little to pay for the region's two system calls. The heap
// takes no lock: the shim runs one thread.
// Sanitized builds keep the C++ runtime's allocator, whose checks they are for: there it does
// nothing.
void start_create_heap() noexcept;

}  // namespace gcr
