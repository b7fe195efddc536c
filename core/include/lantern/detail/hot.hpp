// hot.hpp - LANTERN_HOT marks the functions a wake after an idle spell runs through (the
// outside submit, the waker's claim and ring, the woken worker's way back to a task).
// g++ places hot functions together (.text.hot, grouped by the linker), so that path
// touches fewer code pages: after an idle spell every page is a TLB miss, and on a VM a
// miss is a two-dimensional page walk (~60-150 ns each on the VM of bench/RESULTS.md,
// "Session 18"). Mark only what that path runs; the attribute also optimises for speed.
#pragma once

#if defined(__GNUC__)
#define LANTERN_HOT [[gnu::hot]]
#else
#define LANTERN_HOT
#endif
