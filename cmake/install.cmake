# What `cmake --install BUILD --prefix P` puts under P:
#   bin/parbench                     the command
#   lib/libparbench.so.* and .a      the library, shared and static
#   include/parbench/*.h             its public headers
#   lib/pkgconfig/parbench.pc        pkg-config (--static adds the dependencies)
#   lib/cmake/parbench/              find_package(parbench): parbench::parbench
#   share/man/man1/parbench.1        the manual page
#   share/bash-completion/completions/parbench
#   share/doc/parbench/examples/     the examples, with their CMakeLists.txt
# (lib may be lib/<multiarch> by GNUInstallDirs.) The .pc file and the CMake
# package find the prefix from where they lie, so the tree can be installed
# under any --prefix and moved. `cpack` in the build directory makes a Debian
# package of the same files.
include(CMakePackageConfigHelpers)

install(TARGETS parbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS parbench_shared EXPORT parbench-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS parbench_lib ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/parbench DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
configure_file(doc/parbench.1.in ${CMAKE_BINARY_DIR}/parbench.1 @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/parbench.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES doc/parbench-completion.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME parbench)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# ---- parbench.pc ------------------------------------------------------------
# Static linking needs the library's dependencies: those with a .pc file go to
# Requires.private, the others to Libs.private as -L/-l flags.
set(pc_requires libcjson)
set(pc_libs ${ZLIB_LIBRARIES} m)
if(PB_OPENBLAS_ENABLED)
  list(APPEND pc_requires openblas)
endif()
if(PB_LIBRSB_ENABLED)
  list(APPEND pc_requires librsb)
endif()
if(PB_MPI_ENABLED)
  list(APPEND pc_libs ${MPI_C_LINK_FLAGS} ${MPI_C_LIBRARIES})
endif()
if(PB_OPENMP_ENABLED)
  list(APPEND pc_libs ${OpenMP_C_LIBRARIES})
endif()
if(PB_OPENCL_ENABLED)
  list(APPEND pc_libs ${OpenCL_LIBRARIES})
endif()
if(PB_CUDA_ENABLED) # the CUDA code is C++ and needs the runtime's own dependencies
  list(APPEND pc_libs "-L${CUDAToolkit_LIBRARY_DIR}" cudart_static cublas cusparse stdc++ ${CMAKE_DL_LIBS} rt pthread)
endif()

# Library paths and names as -L/-l flags (none for the compiler's own directories).
set(pc_libs_private "")
foreach(lib IN LISTS pc_libs)
  if(lib MATCHES "^-")
    list(APPEND pc_libs_private "${lib}")
  elseif(IS_ABSOLUTE "${lib}")
    get_filename_component(dir "${lib}" DIRECTORY)
    get_filename_component(file "${lib}" NAME)
    if(NOT dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
      list(APPEND pc_libs_private "-L${dir}")
    endif()
    if(file MATCHES "^lib(.+)\\.(so|a)(\\..*)?$")
      list(APPEND pc_libs_private "-l${CMAKE_MATCH_1}")
    else()
      list(APPEND pc_libs_private "${lib}")
    endif()
  else()
    list(APPEND pc_libs_private "-l${lib}")
  endif()
endforeach()
list(REMOVE_DUPLICATES pc_libs_private)
list(JOIN pc_libs_private " " pc_libs_private)
list(JOIN pc_requires " " pc_requires)

# The prefix relative to the .pc file's directory (lib/pkgconfig -> ../..).
file(RELATIVE_PATH pc_prefix "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" pc_prefix "\${pcfiledir}/${pc_prefix}")
configure_file(cmake/parbench.pc.in ${CMAKE_BINARY_DIR}/parbench.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/parbench.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# pkg-config takes NAME-uninstalled.pc before NAME.pc where both are on its
# path: with PKG_CONFIG_PATH=BUILD_DIR, this build's headers and library, not
# those of an installed parbench (parbench.pc's prefix is ../.. of its folder).
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/parbench-uninstalled.pc @ONLY CONTENT "libdir=\${pcfiledir}
includedir=@PROJECT_SOURCE_DIR@/include

Name: parbench
Description: parbench from its build tree
Version: @PROJECT_VERSION@
Requires.private: @pc_requires@
Cflags: -I\${includedir}
Libs: -L\${libdir} -lparbench
Libs.private: @pc_libs_private@
")

# ---- the CMake package --------------------------------------------------------
set(pb_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/parbench)
install(EXPORT parbench-targets NAMESPACE parbench:: DESTINATION ${pb_cmake_dir})
configure_package_config_file(cmake/parbench-config.cmake.in ${CMAKE_BINARY_DIR}/parbench-config.cmake
                              INSTALL_DESTINATION ${pb_cmake_dir})
# 0.x: the SONAME is libparbench.so.0, so the same major version is compatible.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/parbench-config-version.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/parbench-config.cmake ${CMAKE_BINARY_DIR}/parbench-config-version.cmake
        DESTINATION ${pb_cmake_dir})

# ---- cpack: a Debian package ---------------------------------------------------
# Dependencies come from the shared objects' needs (dpkg-shlibdeps; libraries
# outside Debian's packages, e.g. the CUDA toolkit's, add none). Build it with
# -DPB_NATIVE=OFF to install it on other machines.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME parbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "parallel kernel benchmarks and library (ref, OpenMP, CUDA, OpenCL), verified results")
set(CPACK_PACKAGE_CONTACT "parbench maintainers" CACHE STRING "Maintainer field of the Debian package")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(PB_CUDA_ENABLED) # where dpkg-shlibdeps finds cuBLAS and cuSPARSE
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "pkg-config")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "pocl-opencl-icd | opencl-icd, openmpi-bin")
include(CPack)
