# Install rules and the find_package(Pulse) package: the compiler library and
# its public headers (Pulse::pulse), main() of spec programs
# (Pulse::generator_main), the example generator programs (Pulse::conv1d, ...),
# the runtime headers (Pulse::runtime), the CM emulation headers, and the
# functions pulse_add_spec_program and pulse_add_kernel.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Header-only host helpers for CUDA programs (runtime/pulse_cuda.h) and the
# buffer descriptor generated kernels take (runtime/pulse_buffer.h). Installed
# in include/pulse; both <pulse/pulse_cuda.h> and "pulse_cuda.h" (what generated
# headers write) resolve.
add_library(pulse_runtime INTERFACE)
target_include_directories(pulse_runtime INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/pulse>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(pulse_runtime PROPERTIES EXPORT_NAME runtime)
add_library(Pulse::runtime ALIAS pulse_runtime)

install(TARGETS pulse pulse_generator_main pulse_runtime conv1d conv2d matmul matvec fir stencil
  EXPORT PulseTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The public headers: pulse.h and what it includes (the compiler's own headers stay private).
install(FILES ${PROJECT_SOURCE_DIR}/frontend/include/pulse/pulse.h ${PROJECT_SOURCE_DIR}/base/include/pulse/Error.h
  ${PROJECT_SOURCE_DIR}/base/include/pulse/Types.h ${PROJECT_SOURCE_DIR}/base/include/pulse/ScalarSemantics.h
  ${PROJECT_SOURCE_DIR}/runtime/pulse_cuda.h ${PROJECT_SOURCE_DIR}/runtime/pulse_buffer.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pulse)
# The importer, the documentation the tools point to, and the explorer's plot script
# (share/doc/pulse, share/pulse/scripts: the explorer names the installed copy).
install(TARGETS pulse-import RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/pulse)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/explore_plot.py ${PROJECT_SOURCE_DIR}/scripts/explore_calibrate.py
  DESTINATION ${CMAKE_INSTALL_DATADIR}/pulse/scripts)
# The CM emulation, for building a kernel written by --emit cm by hand
# (-I <prefix>/include/pulse/cm_emu); --emit cm-emu carries its own copy.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/cm_emu/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pulse/cm_emu)
install(EXPORT PulseTargets NAMESPACE Pulse:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Pulse)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/PulseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/PulseConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Pulse)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/PulseConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/PulseConfig.cmake ${PROJECT_BINARY_DIR}/PulseConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/PulseKernel.cmake ${CMAKE_CURRENT_LIST_DIR}/PulseSpecProgram.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Pulse)
