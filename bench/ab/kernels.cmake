# SPDX-License-Identifier: Apache-2.0
# lantern_ab_kernels(CORE): one program per kernel of ab_kernels.cpp, lantern_ab_<kernel>,
# linked against the core library target CORE. Included by this folder's standalone
# project (ab.py's builds, against any commit's core) and by bench/CMakeLists.txt (this
# tree's build, whose smoke test keeps the kernels compiling against the current core).
set(LANTERN_AB_KERNELS fib_join skynet_join skynet_taskgroup nqueens_tg parallel_for fib_join_extern graph_wavefront)
set(LANTERN_AB_DIR ${CMAKE_CURRENT_LIST_DIR})
function(lantern_ab_kernels core)
  set(number 1)
  foreach(kernel IN LISTS LANTERN_AB_KERNELS)
    add_executable(lantern_ab_${kernel} ${LANTERN_AB_DIR}/ab_kernels.cpp)
    target_compile_definitions(lantern_ab_${kernel} PRIVATE AB_KERNEL=${number})
    target_include_directories(lantern_ab_${kernel} PRIVATE ${LANTERN_AB_DIR}/..)
    target_link_libraries(lantern_ab_${kernel} PRIVATE ${core})
    math(EXPR number "${number} + 1")
  endforeach()
endfunction()
