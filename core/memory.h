// Memory hints for big, short-lived buffers.
#pragma once

#include <cstddef>

namespace longhaul {

// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) with transparent huge
// pages (madvise MADV_HUGEPAGE) before it is first written. A 100,000-stage workflow fills
// about 100 MB of freshly allocated vectors; in 4 KiB pages that is 25,000 page faults, which
// cost as much CPU as the parse itself on a virtual machine. Only a hint: smaller ranges,
// kernels without THP, or THP set to "never" are no-ops. Memory already touched keeps its pages.
void AdviseHugePages(const void* data, size_t bytes);

}  // namespace longhaul
