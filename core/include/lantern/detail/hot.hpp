// SPDX-License-Identifier: Apache-2.0
// hot.hpp - LANTERN_HOT marks the functions a wake after an idle spell runs through (the
// outside submit, the waker's claim and ring, the woken worker's way back to a task).
// g++ places hot functions together (.text.hot, grouped by the linker in the order of
// lantern_core's sources, core/CMakeLists.txt), so that path touches fewer code pages
// (bench/diagnostics/wake_pages.py counts them). Where an idle spell costs the TLB (a kernel whose
// system calls flush it, a VM), each page on that path is a miss, ~60-150 ns on a VM (a
// two-dimensional page walk); where system calls keep the TLB (PCID, no page-table
// isolation) one code page less per side is no faster. Mark only what that path runs;
// the attribute also optimises for speed.
#pragma once

#if defined(__GNUC__)
#define LANTERN_HOT [[gnu::hot]]
#else
#define LANTERN_HOT
#endif
