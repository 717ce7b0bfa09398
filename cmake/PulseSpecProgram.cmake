# pulse_add_spec_program(NAME [SOURCES] source...)
#
# A generator program NAME built from spec files that register their specs with
# PULSE_REGISTER_SPEC; it has the command line every spec program shares
# (NAME --help). The spec files are also an OBJECT library NAME_specs, so tests
# can link them: static registration survives in object files, not in a static
# library's unreferenced members.
#
# Works in Pulse's own tree and, after find_package(Pulse), in any project.
include_guard(GLOBAL)

function(pulse_add_spec_program name)
  set(sources ${ARGN})
  list(REMOVE_ITEM sources SOURCES)
  if(NOT sources)
    message(FATAL_ERROR "pulse_add_spec_program(${name}): give the spec source files, e.g. "
                        "pulse_add_spec_program(${name} SOURCES ${name}.cpp)")
  endif()
  add_library(${name}_specs OBJECT ${sources})
  target_link_libraries(${name}_specs PUBLIC Pulse::pulse)
  add_executable(${name} $<TARGET_OBJECTS:${name}_specs>)
  target_link_libraries(${name} PRIVATE Pulse::generator_main Pulse::pulse)
endfunction()
