# SPDX-License-Identifier: Apache-2.0
# The installed lantern package: every library an application links, exported as
# lantern::core, lantern::vocabulary, lantern::trace_format, lantern::analysis,
# lantern::instrumentation, lantern::prometheus and lantern::observe: each directory
# installs its own target into the lanternTargets export set. Here: a CMake config that
# finds their dependencies and offers each target as a component, lantern.pc for other
# builds, and the documentation and Grafana dashboard under share/.
#
#   find_package(lantern REQUIRED)                        # CMake
#   find_package(lantern REQUIRED COMPONENTS core observe prometheus)   # the same, checked
#   target_link_libraries(app PRIVATE lantern::observe)   # everything, with one call
#
#   c++ app.cpp $(pkg-config --cflags --libs lantern)     # anything else (-std=c++20 included)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LANTERN_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lantern)
get_property(LANTERN_PKG_DEPENDENCIES GLOBAL PROPERTY LANTERN_PKG_DEPENDENCIES)
# The package's components: one for each exported target (lantern-config.cmake.in).
set(LANTERN_PACKAGE_COMPONENTS "")
foreach(component core vocabulary trace_format analysis instrumentation prometheus observe)
  if(TARGET lantern_${component})
    list(APPEND LANTERN_PACKAGE_COMPONENTS ${component})
  endif()
endforeach()
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
# dependencies as pkg-config modules. Cflags carry -std=c++20, as the CMake targets carry
# cxx_std_20: the headers need C++20. An app on a later standard puts its own -std after
# $(pkg-config --cflags lantern), since the last -std given wins. The prefix is found relative to the .pc file, so an
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

# The documentation of what is installed: the READMEs of the libraries and programs in
# the source tree's layout under share/doc/lantern (exporters/prometheus/README.md is the
# metrics reference), with the viewer's pictures the top README shows; and the Grafana
# dashboard under share/lantern/grafana. bench/ and tests/ are not installed, nor their
# READMEs.
file(GLOB_RECURSE LANTERN_DOCS RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/core/README.md ${PROJECT_SOURCE_DIR}/instrumentation/README.md
  ${PROJECT_SOURCE_DIR}/exporters/README.md ${PROJECT_SOURCE_DIR}/viewer/README.md
  ${PROJECT_SOURCE_DIR}/viewer/docs/*.png)
foreach(doc README.md ${LANTERN_DOCS})
  get_filename_component(doc_dir ${doc} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${doc} DESTINATION ${CMAKE_INSTALL_DOCDIR}/${doc_dir})
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/exporters/grafana/lantern-dashboard.json
  DESTINATION ${CMAKE_INSTALL_DATADIR}/lantern/grafana)
