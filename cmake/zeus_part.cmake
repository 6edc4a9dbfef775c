# zeus_add_part(NAME DIR DEPS ...) defines the static library zeus_<NAME> from
# every .cc file under DIR. A part with no sources yet becomes an interface
# library, so the build works while parts are being written.
function(zeus_add_part name dir)
  cmake_parse_arguments(PART "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.cc)
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
endfunction()
