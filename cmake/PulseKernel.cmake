# pulse_add_kernel(NAME SPEC_PROGRAM <generator> SPEC <spec> [PARAMS K=V ...])
#
# Ahead-of-time compilation of a Pulse spec to CUDA: at build time, runs the
# generator program (`<generator> -g <spec> --param K=V ... --emit cuda -o DIR`)
# and compiles the generated DIR/<spec>.cu into a static library NAME. Link
# NAME and include "<spec>.h" to call the host function
#   cudaError_t <spec>(pulse_buffer inputs..., pulse_buffer outputs..., cudaStream_t stream);
# (buffer descriptors, runtime/pulse_buffer.h: the output extents are the problem size).
# <generator> is a target: a spec program of this build (pulse_add_spec_program)
# or an installed one (Pulse::conv1d). Nothing is built, and a status message
# says so, if no CUDA compiler is found.
#
# The kernel is compiled for CMAKE_CUDA_ARCHITECTURES if the project set it,
# else for 90 (Hopper).
#
# Included at file scope, because enable_language may not be called inside a
# function.
include_guard(GLOBAL)

# Kernels are built for sm_90 (Hopper) unless the project chose architectures
# (CMAKE_CUDA_ARCHITECTURES or the CUDAARCHS environment variable): once CUDA
# is enabled, CMake fills CMAKE_CUDA_ARCHITECTURES with the compiler's default
# (sm_52 or sm_75), which must not win silently.
get_property(_pulse_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if("CUDA" IN_LIST _pulse_languages)
  # Enabled before Pulse was loaded: a value CMake detected carries CMake's
  # help string; one the project set (-D, set(), CUDAARCHS) does not.
  get_property(_pulse_arch_help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
  get_property(_pulse_arch_cached CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY VALUE)
  if(_pulse_arch_help STREQUAL "CUDA architectures" AND "$ENV{CUDAARCHS}" STREQUAL ""
     AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${_pulse_arch_cached}")
    set(PULSE_KERNEL_ARCHITECTURES 90)
  endif()
else()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND "$ENV{CUDAARCHS}" STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures (Pulse's default: 90, Hopper)")
    endif()
    enable_language(CUDA)
  endif()
endif()

function(pulse_add_kernel name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "SPEC_PROGRAM;SPEC" "PARAMS")
  if(NOT ARG_SPEC_PROGRAM OR NOT ARG_SPEC)
    message(FATAL_ERROR "pulse_add_kernel(${name}): SPEC_PROGRAM and SPEC are required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pulse_add_kernel(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    message(STATUS "pulse_add_kernel(${name}): no CUDA compiler found, the kernel is not built")
    return()
  endif()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${name}.pulse")
  set(params "")
  foreach(p IN LISTS ARG_PARAMS)
    list(APPEND params --param "${p}")
  endforeach()
  add_custom_command(
    OUTPUT "${dir}/${ARG_SPEC}.cu" "${dir}/${ARG_SPEC}.h" "${dir}/${ARG_SPEC}_reference.h" "${dir}/${ARG_SPEC}_check.cu"
    COMMAND "$<TARGET_FILE:${ARG_SPEC_PROGRAM}>" -g "${ARG_SPEC}" ${params} --emit cuda -o "${dir}"
    DEPENDS ${ARG_SPEC_PROGRAM}
    COMMENT "Pulse: generating CUDA kernel ${ARG_SPEC} (${name})"
    VERBATIM)
  add_library(${name} STATIC "${dir}/${ARG_SPEC}.cu")
  target_include_directories(${name} PUBLIC "$<BUILD_INTERFACE:${dir}>")
  if(TARGET Pulse::runtime)
    target_link_libraries(${name} PUBLIC Pulse::runtime)
  elseif(TARGET pulse_runtime)
    target_link_libraries(${name} PUBLIC pulse_runtime)
  endif()
  if(PULSE_KERNEL_ARCHITECTURES)
    set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES ${PULSE_KERNEL_ARCHITECTURES})
  endif()
  target_compile_features(${name} PUBLIC cuda_std_17)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
