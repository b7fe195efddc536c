// hot.hpp - LANTERN_HOT marks the functions a wake after an idle spell runs through (the
// outside submit, the waker's claim and ring, the woken worker's way back to a task).
// g++ places hot functions together (.text.hot, grouped by the linker), so that path
// touches fewer code pages. After an idle spell each page on that path cost ~60-150 ns
// on the VM of bench/RESULTS.md, "Session 18" (a TLB miss, and on a VM a miss is a
// two-dimensional page walk); on session 21's host (no page-table isolation, PCID: its
// system calls keep the TLB) one code page less per side measured no faster. Mark only
// what that path runs; the attribute also optimises for speed.
#pragma once

#if defined(__GNUC__)
#define LANTERN_HOT [[gnu::hot]]
#else
#define LANTERN_HOT
#endif
