# SPDX-License-Identifier: Apache-2.0
# The installed lantern package: every library an application links, exported as
# lantern::core, lantern::trace_format, lantern::instrumentation, lantern::prometheus and
# lantern::observe (and lantern::analysis / lantern::vocabulary where those exist): each
# directory installs its own target into the lanternTargets export set. Here: a CMake
# config that finds their dependencies, and lantern.pc for other builds.
#
#   find_package(lantern REQUIRED)                        # CMake
#   target_link_libraries(app PRIVATE lantern::observe)   # everything, with one call
#
#   c++ -std=c++20 app.cpp $(pkg-config --cflags --libs lantern)   # anything else
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LANTERN_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lantern)
get_property(LANTERN_PKG_DEPENDENCIES GLOBAL PROPERTY LANTERN_PKG_DEPENDENCIES)
set(LANTERN_PACKAGE_PROMETHEUS OFF)
if(TARGET lantern_prometheus)
  set(LANTERN_PACKAGE_PROMETHEUS ON)
endif()

install(EXPORT lanternTargets NAMESPACE lantern:: DESTINATION ${LANTERN_CONFIG_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/lantern-config.cmake.in
  ${PROJECT_BINARY_DIR}/lantern-config.cmake
  INSTALL_DESTINATION ${LANTERN_CONFIG_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lantern-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lantern-config.cmake ${PROJECT_BINARY_DIR}/lantern-config-version.cmake
  DESTINATION ${LANTERN_CONFIG_DIR})

# lantern.pc: the same libraries, dependents first (static archives), and the same
# dependencies as pkg-config modules. The prefix is found relative to the .pc file, so an
# install moved or made with `cmake --install --prefix` still works.
set(LANTERN_PC_LIBS "")
set(LANTERN_PC_REQUIRES "")
foreach(target lantern_observe lantern_prometheus lantern_instrumentation lantern_analysis lantern_trace_format lantern_core)
  if(TARGET ${target})
    string(APPEND LANTERN_PC_LIBS " -l${target}")
  endif()
endforeach()
foreach(dependency IN LISTS LANTERN_PKG_DEPENDENCIES)
  string(REGEX REPLACE "^[^=]*=" "" module "${dependency}")
  list(APPEND LANTERN_PC_REQUIRES ${module})
endforeach()
if(LANTERN_PACKAGE_PROMETHEUS)
  list(APPEND LANTERN_PC_REQUIRES prometheus-cpp-core prometheus-cpp-pull)
  # lantern_prometheus calls civetweb's C++ API itself (the callback that names its
  # threads); civetweb ships no .pc, and prometheus-cpp-pull lists it as private only.
  string(APPEND LANTERN_PC_LIBS " -lcivetweb-cpp")
endif()
list(JOIN LANTERN_PC_REQUIRES ", " LANTERN_PC_REQUIRES)
if(LANTERN_OBSERVER)
  set(LANTERN_PC_OBSERVER 1)
else()
  set(LANTERN_PC_OBSERVER 0)
endif()
file(RELATIVE_PATH LANTERN_PC_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" LANTERN_PC_PREFIX "${LANTERN_PC_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/lantern.pc.in ${PROJECT_BINARY_DIR}/lantern.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/lantern.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The licence travels with the package (share/doc/lantern/LICENSE), as Debian's packages
# carry theirs.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
