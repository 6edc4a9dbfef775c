# The parts of the library and the layering between them.
#
# zeus_add_part(NAME DIR [DEPS ...] [DISABLED]) defines the static library
# zeus_<NAME> from every .cc file under DIR (an interface library while DIR
# has none) and records the part in the layering table: its public headers
# live in include/zeus/<DIR without "src/">/, and it may include headers of
# the zeus_* parts in DEPS and of their dependencies, nothing else. DISABLED
# records the part (its headers stay accounted for) without building it, for
# optional parts whose dependency is missing.
#
# zeus_check_layering() (after the last part) makes every build and the test
# suite run cmake/check_layering.cmake over the table, so an upward include,
# an include of another part's private header, or a header outside every
# part's folder fails the build.
function(zeus_add_part name dir)
  cmake_parse_arguments(PART "DISABLED" "" "DEPS" ${ARGN})
  set(zeus_deps "")
  foreach(dep ${PART_DEPS})
    if(dep MATCHES "^zeus_(.+)$")
      list(APPEND zeus_deps ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY ZEUS_PARTS ${name})
  set_property(GLOBAL PROPERTY ZEUS_PART_${name}_DIR ${dir})
  set_property(GLOBAL PROPERTY ZEUS_PART_${name}_DEPS "${zeus_deps}")
  if(PART_DISABLED)
    return()
  endif()
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.cc)
  # A part nested in another's folder owns its files: take them out of the
  # outer part (defined earlier), and leave out nested parts defined earlier.
  get_property(built GLOBAL PROPERTY ZEUS_BUILT_PARTS)
  foreach(other ${built})
    get_property(other_dir GLOBAL PROPERTY ZEUS_PART_${other}_DIR)
    string(FIND "${dir}/" "${other_dir}/" outer_at)
    string(FIND "${other_dir}/" "${dir}/" inner_at)
    get_target_property(other_type zeus_${other} TYPE)
    if(outer_at EQUAL 0 AND other_type STREQUAL "STATIC_LIBRARY")
      get_target_property(outer_srcs zeus_${other} SOURCES)
      list(FILTER outer_srcs EXCLUDE REGEX "^${CMAKE_SOURCE_DIR}/${dir}/")
      set_property(TARGET zeus_${other} PROPERTY SOURCES ${outer_srcs})
    elseif(inner_at EQUAL 0)
      list(FILTER srcs EXCLUDE REGEX "^${CMAKE_SOURCE_DIR}/${other_dir}/")
    endif()
  endforeach()
  if(srcs)
    add_library(zeus_${name} STATIC ${srcs})
    target_include_directories(zeus_${name} PUBLIC ${CMAKE_SOURCE_DIR}/include
                                             PRIVATE ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(zeus_${name} PUBLIC ${PART_DEPS} PRIVATE zeus_flags)
  else()
    add_library(zeus_${name} INTERFACE)
    target_include_directories(zeus_${name} INTERFACE ${CMAKE_SOURCE_DIR}/include)
    target_link_libraries(zeus_${name} INTERFACE ${PART_DEPS})
  endif()
  set_property(GLOBAL APPEND PROPERTY ZEUS_BUILT_PARTS ${name})
endfunction()

function(zeus_check_layering)
  get_property(parts GLOBAL PROPERTY ZEUS_PARTS)
  set(table "set(ZEUS_PARTS \"${parts}\")\n")
  foreach(part ${parts})
    get_property(dir GLOBAL PROPERTY ZEUS_PART_${part}_DIR)
    get_property(deps GLOBAL PROPERTY ZEUS_PART_${part}_DEPS)
    string(APPEND table "set(ZEUS_PART_${part}_DIR \"${dir}\")\n")
    string(APPEND table "set(ZEUS_PART_${part}_DEPS \"${deps}\")\n")
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
