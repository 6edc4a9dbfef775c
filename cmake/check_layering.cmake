# Include-graph check of the library's layering (see cmake/zeus_part.cmake).
#   cmake -DZEUS_PARTS_FILE=<table> -DZEUS_ROOT=<tree> -P check_layering.cmake
# The table sets ZEUS_PARTS and, per part, ZEUS_PART_<p>_DIR, _DEPS and
# _INTERNAL. Every file of a part (DIR and include/zeus/<DIR minus src/>) may
# include public headers ("zeus/...") of itself and of the parts it depends
# on, directly or through other parts, and private headers
# ("<DIR minus src/>/...") of itself, and of those parts only the ones they
# list as INTERNAL_HEADERS (paths relative to their DIR, which must exist).
# Every header under include/zeus must belong to a part.
cmake_minimum_required(VERSION 3.25)
include(${ZEUS_PARTS_FILE})

# Transitive dependencies of each part.
foreach(part ${ZEUS_PARTS})
  set(closure "")
  set(todo ${ZEUS_PART_${part}_DEPS})
  while(todo)
    list(POP_FRONT todo dep)
    if(NOT dep IN_LIST closure)
      if(NOT DEFINED ZEUS_PART_${dep}_DIR)
        message(FATAL_ERROR "layering: part '${part}' depends on '${dep}', which is not a part")
      endif()
      list(APPEND closure ${dep})
      list(APPEND todo ${ZEUS_PART_${dep}_DEPS})
    endif()
  endwhile()
  set(allowed_${part} ${part} ${closure})
  string(REGEX REPLACE "^src/" "" sub_${part} "${ZEUS_PART_${part}_DIR}")
endforeach()

# The part that owns an include path (longest folder match), or "" if none.
function(owner_of include_path out)
  set(best "")
  set(best_len 0)
  foreach(part ${ZEUS_PARTS})
    foreach(prefix "zeus/${sub_${part}}/" "${sub_${part}}/")
      string(LENGTH "${prefix}" len)
      string(SUBSTRING "${include_path}" 0 ${len} head)
      if(head STREQUAL prefix AND len GREATER best_len)
        set(best ${part})
        set(best_len ${len})
      endif()
    endforeach()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

set(errors "")
set(owned_headers "")
foreach(part ${ZEUS_PARTS})
  file(GLOB_RECURSE files ${ZEUS_ROOT}/${ZEUS_PART_${part}_DIR}/*.cc
       ${ZEUS_ROOT}/${ZEUS_PART_${part}_DIR}/*.h ${ZEUS_ROOT}/include/zeus/${sub_${part}}/*.h)
  foreach(f ${files})
    # A file in a nested part's folder belongs to that part.
    file(RELATIVE_PATH rel ${ZEUS_ROOT} ${f})
    string(REGEX REPLACE "^(src|include)/" "" under "${rel}")
    string(REGEX REPLACE "^zeus/" "" under "${under}")
    owner_of("zeus/${under}" file_owner)
    if(NOT file_owner STREQUAL part)
      continue()
    endif()
    if(rel MATCHES "^include/")
      list(APPEND owned_headers ${rel})
    endif()
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line ${lines})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" inc "${line}")
      owner_of("${inc}" inc_owner)
      if(inc_owner STREQUAL "" OR inc_owner STREQUAL part)
        continue()
      endif()
      if(NOT inc MATCHES "^zeus/")
        string(LENGTH "${sub_${inc_owner}}/" sub_len)
        string(SUBSTRING "${inc}" ${sub_len} -1 inc_in_part)
        if(NOT inc_in_part IN_LIST ZEUS_PART_${inc_owner}_INTERNAL)
          list(APPEND errors "${rel}: includes \"${inc}\", a private header of part '${inc_owner}'")
        elseif(NOT inc_owner IN_LIST allowed_${part})
          list(APPEND errors
               "${rel}: part '${part}' may not include \"${inc}\", an internal header of part '${inc_owner}' (allowed: ${allowed_${part}})")
        endif()
      elseif(NOT inc_owner IN_LIST allowed_${part})
        list(APPEND errors
             "${rel}: part '${part}' may not include \"${inc}\" of part '${inc_owner}' (allowed: ${allowed_${part}})")
      endif()
    endforeach()
  endforeach()
endforeach()

# An internal header that is not there (moved or renamed) is an error too.
foreach(part ${ZEUS_PARTS})
  foreach(h ${ZEUS_PART_${part}_INTERNAL})
    if(NOT EXISTS ${ZEUS_ROOT}/${ZEUS_PART_${part}_DIR}/${h})
      list(APPEND errors "${ZEUS_PART_${part}_DIR}/${h}: listed in INTERNAL_HEADERS of part '${part}', not there")
    endif()
  endforeach()
endforeach()

file(GLOB_RECURSE all_headers RELATIVE ${ZEUS_ROOT} ${ZEUS_ROOT}/include/zeus/*.h)
foreach(h ${all_headers})
  if(NOT h IN_LIST owned_headers)
    list(APPEND errors "${h}: belongs to no part (public headers mirror the parts' source folders)")
  endif()
endforeach()

if(errors)
  list(JOIN errors "\n  " text)
  message(FATAL_ERROR "layering violations (the part table is in CMakeLists.txt):\n  ${text}")
endif()
list(LENGTH ZEUS_PARTS n)
message(STATUS "layering: ${n} parts, no violation")
