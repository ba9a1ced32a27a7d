# kokkosattn_set_warnings(<target>)
#   Strict warnings for kokkos-attention's OWN targets (never for dependencies):
#   -Wall -Wextra -Wpedantic -Wshadow, plus -Werror unless
#   KokkosAttn_WARNINGS_AS_ERRORS is OFF. C++ sources only; Kokkos headers come
#   in through an imported target and are therefore -isystem (no warnings).
include_guard(GLOBAL)

function(kokkosattn_set_warnings target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "kokkosattn_set_warnings: no target named '${target}'")
  endif()
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    # Usage requirements would leak -Werror into consumers (and the installed
    # export); set warnings on the targets that compile the headers instead.
    return()
  endif()
  set(_flags -Wall -Wextra -Wpedantic -Wshadow)
  if(NOT DEFINED KokkosAttn_WARNINGS_AS_ERRORS OR KokkosAttn_WARNINGS_AS_ERRORS)
    list(APPEND _flags -Werror)
  endif()
  if(MSVC)
    set(_flags /W4 /permissive-)
    if(NOT DEFINED KokkosAttn_WARNINGS_AS_ERRORS OR KokkosAttn_WARNINGS_AS_ERRORS)
      list(APPEND _flags /WX)
    endif()
  endif()
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${_flags}>")
endfunction()
