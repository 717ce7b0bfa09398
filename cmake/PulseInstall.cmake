# Install rules and the find_package(Pulse) package: the generator programs of
# the examples, the CUDA runtime header and the pulse_add_kernel function.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Header-only host helpers for CUDA programs (runtime/pulse_cuda.h) and the
# buffer descriptor generated kernels take (runtime/pulse_buffer.h).
add_library(pulse_runtime INTERFACE)
target_include_directories(pulse_runtime INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/pulse>)
set_target_properties(pulse_runtime PROPERTIES EXPORT_NAME runtime)
add_library(Pulse::runtime ALIAS pulse_runtime)

install(TARGETS pulse_runtime conv1d conv2d matmul matvec fir
  EXPORT PulseTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/runtime/pulse_cuda.h ${PROJECT_SOURCE_DIR}/runtime/pulse_buffer.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pulse)
install(EXPORT PulseTargets NAMESPACE Pulse:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Pulse)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/PulseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/PulseConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Pulse)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/PulseConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/PulseConfig.cmake ${PROJECT_BINARY_DIR}/PulseConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/PulseKernel.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Pulse)
