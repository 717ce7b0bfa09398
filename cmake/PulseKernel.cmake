# pulse_add_kernel(NAME SPEC_PROGRAM <generator> SPEC <spec> [KERNEL_NAME <kernel>]
#                  [PARAMS K=V ...] [OPTIONS <generator flags> ...])
#
# Ahead-of-time compilation of a Pulse spec to CUDA: at build time, runs the
# generator program (`<generator> -g <spec> --param K=V ... --name=<kernel>
# <flags> --emit cuda -o DIR`) and compiles the generated DIR/<kernel>.cu into a
# static library NAME. Link NAME and include "<kernel>.h" to call the host function
#   cudaError_t <kernel>(pulse_buffer inputs..., pulse_buffer outputs..., cudaStream_t stream);
# <kernel> is <spec> unless KERNEL_NAME names it: two kernels of one spec (at
# other PARAMS, another --design) need names of their own, and a second
# pulse_add_kernel with a kernel name already taken is an error. OPTIONS are
# generator flags: --design ID, --range MIN:MAX, --unroll-steps=N,
# --min-blocks-per-sm=N, --max-shared-bytes=N, --prefetch (docs/backends.md).
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

# The arguments pulse_add_kernel and pulse_add_cm_kernel share, checked: sets
# ARG_* , `kernel` (KERNEL_NAME, else SPEC) and `params` (--param K=V ...) in
# the caller's scope.
macro(_pulse_kernel_arguments function name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "SPEC_PROGRAM;SPEC;KERNEL_NAME" "PARAMS;OPTIONS")
  if(NOT ARG_SPEC_PROGRAM OR NOT ARG_SPEC)
    message(FATAL_ERROR "${function}(${name}): SPEC_PROGRAM and SPEC are required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${function}(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  # A word that is no keyword lands in the list before it: PARAMS take K=V only.
  set(params "")
  foreach(p IN LISTS ARG_PARAMS)
    if(NOT p MATCHES "^[A-Za-z_][A-Za-z0-9_]*=-?[0-9]+$")
      message(FATAL_ERROR "${function}(${name}): PARAMS entry '${p}' is not NAME=VALUE (an integer); "
                          "the kernel's name goes after KERNEL_NAME, generator flags after OPTIONS")
    endif()
    list(APPEND params --param "${p}")
  endforeach()
  set(kernel "${ARG_SPEC}")
  if(ARG_KERNEL_NAME)
    set(kernel "${ARG_KERNEL_NAME}")
  endif()
endmacro()

function(pulse_add_kernel name)
  _pulse_kernel_arguments(pulse_add_kernel ${name})
  # One host function per name in a build: two libraries defining it would link, and the
  # program would get one of them in silence.
  get_property(taken GLOBAL PROPERTY PULSE_KERNEL_NAMES)
  if(kernel IN_LIST taken)
    get_property(owner GLOBAL PROPERTY "PULSE_KERNEL_OWNER_${kernel}")
    message(FATAL_ERROR "pulse_add_kernel(${name}): the kernel name '${kernel}' is taken by pulse_add_kernel(${owner}); "
                        "give one of them its own KERNEL_NAME")
  endif()
  set_property(GLOBAL APPEND PROPERTY PULSE_KERNEL_NAMES "${kernel}")
  set_property(GLOBAL PROPERTY "PULSE_KERNEL_OWNER_${kernel}" "${name}")
  if(NOT CMAKE_CUDA_COMPILER)
    message(STATUS "pulse_add_kernel(${name}): no CUDA compiler found, the kernel is not built")
    return()
  endif()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${name}.pulse")
  add_custom_command(
    OUTPUT "${dir}/${kernel}.cu" "${dir}/${kernel}.h" "${dir}/${kernel}_reference.h" "${dir}/${kernel}_check.cu"
    COMMAND "$<TARGET_FILE:${ARG_SPEC_PROGRAM}>" -g "${ARG_SPEC}" ${params} "--name=${kernel}" ${ARG_OPTIONS} --emit cuda -o "${dir}"
    DEPENDS ${ARG_SPEC_PROGRAM}
    COMMENT "Pulse: generating CUDA kernel ${kernel} (${name}: spec ${ARG_SPEC})"
    VERBATIM)
  add_library(${name} STATIC "${dir}/${kernel}.cu")
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

# pulse_add_cm_kernel(NAME SPEC_PROGRAM <generator> SPEC <spec> [KERNEL_NAME <kernel>]
#                     [PARAMS K=V ...] [OPTIONS <generator flags> ...])
#
# The same for Intel GPUs (C for Metal): the target NAME, built by default,
# runs `<generator> -g <spec> ... --name=<kernel> <flags> --emit cm -o DIR` at
# build time, which writes <kernel>_genx.cpp (the CM kernel), <kernel>_host.cpp
# (a Level Zero host program that runs and checks it) and <kernel>_reference.h.
# Pulse does not compile CM (Intel's CM compiler does: docs/backends.md); the
# target's properties PULSE_CM_KERNEL, PULSE_CM_HOST and PULSE_CM_DIRECTORY
# name the files. Needs no GPU compiler.
function(pulse_add_cm_kernel name)
  _pulse_kernel_arguments(pulse_add_cm_kernel ${name})
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${name}.pulse")
  set(files "${dir}/${kernel}_genx.cpp" "${dir}/${kernel}_host.cpp" "${dir}/${kernel}_reference.h")
  add_custom_command(
    OUTPUT ${files}
    COMMAND "$<TARGET_FILE:${ARG_SPEC_PROGRAM}>" -g "${ARG_SPEC}" ${params} "--name=${kernel}" ${ARG_OPTIONS} --emit cm -o "${dir}"
    DEPENDS ${ARG_SPEC_PROGRAM}
    COMMENT "Pulse: generating CM kernel ${kernel} (${name}: spec ${ARG_SPEC})"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${files})
  set_target_properties(${name} PROPERTIES PULSE_CM_KERNEL "${dir}/${kernel}_genx.cpp" PULSE_CM_HOST "${dir}/${kernel}_host.cpp"
                                           PULSE_CM_DIRECTORY "${dir}")
endfunction()
