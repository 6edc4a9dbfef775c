# The parts of the library and the layering between them.
#
# zeus_add_part(NAME DIR [DEPS ...] [OPTIONAL_DEPS ...] [INTERNAL_HEADERS ...] [IF VAR]
#               [DISABLED] [PROGRAMS_ONLY])
# defines the static library
# zeus_<NAME> from every .cc file under DIR (an interface library while DIR
# has none) and records the part in the layering table: its public headers
# live in include/zeus/<DIR without "src/">/, and it may include headers of
# the zeus_* parts in DEPS and of their dependencies, nothing else. DISABLED
# records the part (its headers stay accounted for) without building it, for
# optional parts whose dependency is missing; IF VAR does the same while the
# variable VAR (a ZEUS_WITH_* option) is false. A part whose DEPS name a
# disabled part is disabled too (the services on the HTTP layer, say).
# OPTIONAL_DEPS are parts used when built: when one is disabled the part drops
# its own .cc files that include that part's headers and compiles with
# ZEUS_WITHOUT_<PART>=1 (upper case), so it can say what is missing.
# PROGRAMS_ONLY marks a part that only the project's own programs and
# bindings use (zeusd, the proxy, the simulator, the services' servers): its
# headers stay in include/zeus for them but are not installed, so the
# installed surface is what a user's program can build on.
# Private headers live next to the sources in DIR and are included as
# "<DIR without src/>/x.h": by the part itself, and by the project's programs,
# bindings, tests and benchmarks, which see src/ too. INTERNAL_HEADERS names
# those of them (paths relative to DIR) that the parts depending on this one
# may include as well: the project's shared helpers (util's text, parsing and
# JSON helpers, the HTTP server), never installed, so no installed header may
# include one.
#
# zeus_check_layering() (after the last part) makes every build and the test
# suite run cmake/check_layering.cmake over the table, so an upward include,
# an include of another part's private header (but for the INTERNAL_HEADERS of
# a part it depends on), or a header outside every part's folder fails the
# build.
function(zeus_add_part name dir)
  cmake_parse_arguments(PART "DISABLED;PROGRAMS_ONLY" "IF" "DEPS;OPTIONAL_DEPS;INTERNAL_HEADERS"
                        ${ARGN})
  set_property(GLOBAL PROPERTY ZEUS_PART_${name}_PROGRAMS_ONLY ${PART_PROGRAMS_ONLY})
  set_property(GLOBAL PROPERTY ZEUS_PART_${name}_INTERNAL "${PART_INTERNAL_HEADERS}")
  set(zeus_deps "")
  get_property(built GLOBAL PROPERTY ZEUS_BUILT_PARTS)
  set(missing "")
  foreach(dep ${PART_DEPS})
    if(dep MATCHES "^zeus_(.+)$")
      list(APPEND zeus_deps ${CMAKE_MATCH_1})
      if(NOT CMAKE_MATCH_1 IN_LIST built)
        list(APPEND missing ${CMAKE_MATCH_1})
      endif()
    endif()
  endforeach()
  set(absent_optional "")
  foreach(dep ${PART_OPTIONAL_DEPS})
    string(REGEX REPLACE "^zeus_" "" dep_name "${dep}")
    list(APPEND zeus_deps ${dep_name})
    if(dep_name IN_LIST built)
      list(APPEND PART_DEPS ${dep})
    else()
      list(APPEND absent_optional ${dep_name})
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY ZEUS_PARTS ${name})
  set_property(GLOBAL PROPERTY ZEUS_PART_${name}_DIR ${dir})
  set_property(GLOBAL PROPERTY ZEUS_PART_${name}_DEPS "${zeus_deps}")
  # A part nested in another's folder owns its files, built or not: take them
  # out of the outer part (defined earlier).
  get_property(built GLOBAL PROPERTY ZEUS_BUILT_PARTS)
  foreach(other ${built})
    get_property(other_dir GLOBAL PROPERTY ZEUS_PART_${other}_DIR)
    string(FIND "${dir}/" "${other_dir}/" outer_at)
    get_target_property(other_type zeus_${other} TYPE)
    if(outer_at EQUAL 0 AND other_type STREQUAL "STATIC_LIBRARY")
      get_target_property(outer_srcs zeus_${other} SOURCES)
      list(FILTER outer_srcs EXCLUDE REGEX "^${CMAKE_SOURCE_DIR}/${dir}/")
      set_property(TARGET zeus_${other} PROPERTY SOURCES ${outer_srcs})
    endif()
  endforeach()
  if(DEFINED PART_IF AND NOT ${PART_IF})
    message(STATUS "zeus part ${name}: off (${PART_IF} is OFF)")
    return()
  elseif(missing)
    message(STATUS "zeus part ${name}: off (needs ${missing})")
    return()
  elseif(PART_DISABLED)
    return()
  endif()
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.cc)
  if(absent_optional)
    zeus_filter_sources(srcs ABSENT ${absent_optional})
  endif()
  # ... and leave out the files of parts nested in this one defined earlier.
  get_property(recorded GLOBAL PROPERTY ZEUS_PARTS)
  foreach(other ${recorded})
    get_property(other_dir GLOBAL PROPERTY ZEUS_PART_${other}_DIR)
    string(FIND "${other_dir}/" "${dir}/" inner_at)
    if(inner_at EQUAL 0 AND NOT other STREQUAL name)
      list(FILTER srcs EXCLUDE REGEX "^${CMAKE_SOURCE_DIR}/${other_dir}/")
    endif()
  endforeach()
  if(srcs)
    add_library(zeus_${name} STATIC ${srcs})
    target_include_directories(
      zeus_${name} PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                          $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
      PRIVATE ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(zeus_${name} PUBLIC ${PART_DEPS} PRIVATE $<BUILD_INTERFACE:zeus_flags>)
    foreach(dep ${absent_optional})
      string(TOUPPER "${dep}" dep_upper)
      target_compile_definitions(zeus_${name} PRIVATE ZEUS_WITHOUT_${dep_upper}=1)
    endforeach()
    if(ZEUS_LIBFUZZER)
      target_compile_options(zeus_${name} PRIVATE -fsanitize=fuzzer-no-link)
    endif()
    zeus_precompile_headers(zeus_${name})
  else()
    add_library(zeus_${name} INTERFACE)
    target_include_directories(
      zeus_${name} INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(zeus_${name} INTERFACE ${PART_DEPS})
  endif()
  set_property(GLOBAL APPEND PROPERTY ZEUS_BUILT_PARTS ${name})
  # Every built part is installed (cmake/zeus_install.cmake): Zeus::<name>.
  zeus_install_part(${name} ${dir})
endfunction()

function(zeus_check_layering)
  get_property(parts GLOBAL PROPERTY ZEUS_PARTS)
  set(table "set(ZEUS_PARTS \"${parts}\")\n")
  foreach(part ${parts})
    get_property(dir GLOBAL PROPERTY ZEUS_PART_${part}_DIR)
    get_property(deps GLOBAL PROPERTY ZEUS_PART_${part}_DEPS)
    get_property(internal GLOBAL PROPERTY ZEUS_PART_${part}_INTERNAL)
    string(APPEND table "set(ZEUS_PART_${part}_DIR \"${dir}\")\n")
    string(APPEND table "set(ZEUS_PART_${part}_DEPS \"${deps}\")\n")
    string(APPEND table "set(ZEUS_PART_${part}_INTERNAL \"${internal}\")\n")
  endforeach()
  set(table_file ${CMAKE_BINARY_DIR}/zeus_parts.cmake)
  file(WRITE ${table_file} "${table}")
  set(check ${CMAKE_COMMAND} -DZEUS_PARTS_FILE=${table_file} -DZEUS_ROOT=${CMAKE_SOURCE_DIR}
            -P ${CMAKE_SOURCE_DIR}/cmake/check_layering.cmake)
  add_custom_target(zeus_layering ALL COMMAND ${check} COMMENT "Checking the include layering"
                    VERBATIM)
  get_property(built GLOBAL PROPERTY ZEUS_BUILT_PARTS)
  foreach(part ${built})
    add_dependencies(zeus_${part} zeus_layering)
  endforeach()
  set(ZEUS_LAYERING_CHECK "${check}" PARENT_SCOPE)
endfunction()

# zeus_filter_sources(VAR) keeps, of the .cc files in VAR, those whose
# part headers, public (`#include "zeus/<dir>/..."`) or private
# (`#include "<dir>/..."`), all belong to built parts, so the programs and
# bindings that register themselves (the CLI's commands, the Python binders,
# the examples) lose exactly the pieces of parts a configuration leaves out
# (ZEUS_MINIMAL, ZEUS_WITH_*) without naming them. Call it after the last part
# (zeus_add_part passes ABSENT: the parts to treat as missing).
function(zeus_filter_sources var)
  cmake_parse_arguments(FILTER "" "" "ABSENT" ${ARGN})
  get_property(parts GLOBAL PROPERTY ZEUS_PARTS)
  if(DEFINED FILTER_ABSENT)
    set(absent ${FILTER_ABSENT})
  else()
    get_property(built GLOBAL PROPERTY ZEUS_BUILT_PARTS)
    set(absent ${parts})
    list(REMOVE_ITEM absent ${built})
  endif()
  set(kept "")
  foreach(src ${${var}})
    file(STRINGS ${src} includes REGEX "^#include \"")
    set(ok TRUE)
    foreach(line ${includes})
      string(REGEX REPLACE "^#include \"(zeus/)?([^\"]+)\".*$" "\\2" header "${line}")
      # The part whose folder holds the header: the longest matching DIR.
      set(owner "")
      set(owner_len 0)
      foreach(part ${parts})
        get_property(dir GLOBAL PROPERTY ZEUS_PART_${part}_DIR)
        string(REGEX REPLACE "^src/?" "" rel "${dir}")
        string(LENGTH "${rel}" len)
        string(FIND "${header}" "${rel}/" at)
        if(at EQUAL 0 AND len GREATER owner_len)
          set(owner ${part})
          set(owner_len ${len})
        endif()
      endforeach()
      if(owner AND owner IN_LIST absent)
        set(ok FALSE)
      endif()
    endforeach()
    if(ok)
      list(APPEND kept ${src})
    endif()
  endforeach()
  set(${var} ${kept} PARENT_SCOPE)
endfunction()

# zeus_precompile_headers(TARGET [HEADER...]) precompiles fmt, nlohmann_json,
# the standard containers and HEADERs for TARGET when ZEUS_PRECOMPILED_HEADERS
# is on (pip's build), and does nothing otherwise.
function(zeus_precompile_headers target)
  if(ZEUS_PRECOMPILED_HEADERS)
    target_precompile_headers(${target} PRIVATE <fmt/format.h> <nlohmann/json.hpp> <functional>
                              <map> <memory> <string> <vector> ${ARGN})
  endif()
endfunction()
