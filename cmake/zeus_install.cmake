# Installing the project (docs/install.md): `cmake --install`, the Debian
# packages (cmake/zeus_packaging.cmake) and the Python route all go through
# these rules.
#
# zeus_install_part(NAME DIR) is called by zeus_add_part for every built part:
# the static library (or interface target) joins the export set ZeusTargets as
# Zeus::<NAME>. zeus_install_package() (after the last part) installs the
# parts' public headers, the programs, the data the commands read at run time,
# the CMake package (find_package(Zeus)) and the pkg-config file zeus.pc.
# Nothing here names a part: a new zeus_add_part line is installed as is.
#
# Install components (one per Debian package): runtime (zeus), development
# (libzeus-dev), daemon (zeusd), python (python3-zeuscpp).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ZEUS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Zeus)
set(ZEUS_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/zeus)

function(zeus_install_part name dir)
  set_target_properties(zeus_${name} PROPERTIES EXPORT_NAME ${name})
  add_library(Zeus::${name} ALIAS zeus_${name})
  install(TARGETS zeus_${name} EXPORT ZeusTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
  # `cmake --install --strip` and the packages (CPACK_STRIP_FILES) strip
  # programs only; archives keep their debug information (and with it the
  # build tree's path) unless stripped here too, as Debian's dh_strip does.
  get_target_property(type zeus_${name} TYPE)
  if(type STREQUAL "STATIC_LIBRARY" AND CMAKE_STRIP)
    install(CODE "if(CMAKE_INSTALL_DO_STRIP)
  execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:zeus_${name}>\"
    COMMAND_ERROR_IS_FATAL ANY)
endif()" COMPONENT development)
  endif()
endfunction()

# How the installed package finds a dependency that a part's link interface
# names, by the namespace of the imported target: the arguments of its
# find_package call (by name: never a path of the machine that built Zeus),
# the Debian package that provides it for libzeus-dev, and its pkg-config
# module (or link flags) for zeus-*.pc. The dependencies of the parts in
# Zeus::zeus are required (find_dependency: find_package(Zeus) fails naming
# the missing one, and libzeus-dev depends on its package); those of the parts
# outside it (the MPI reducer, the kubelet client) are looked for quietly and
# their packages suggested, so only a program that links such a part needs
# them. A part that brings a new imported dependency adds its lines here;
# configuring fails until it does.
set(ZEUS_FIND_fmt fmt)
set(ZEUS_FIND_nlohmann_json nlohmann_json)
set(ZEUS_FIND_Threads Threads)
set(ZEUS_FIND_CURL CURL)
set(ZEUS_FIND_SQLite SQLite3)
set(ZEUS_FIND_OpenSSL OpenSSL COMPONENTS Crypto)
set(ZEUS_FIND_MPI MPI COMPONENTS C)
set(ZEUS_FIND_CLI11 CLI11)
set(ZEUS_FIND_Boost Boost)
set(ZEUS_FIND_LibLZMA LibLZMA)
# cmake/find/FindLibSVM.cmake, installed beside ZeusConfig.cmake.
set(ZEUS_FIND_LibSVM LibSVM)
# Not gRPC CONFIG: Debian's needs the code generator (cmake/find/FindGrpcPlusPlus.cmake).
set(ZEUS_FIND_gRPC GrpcPlusPlus)
set(ZEUS_FIND_protobuf Protobuf)
# PkgConfig::<NAME>: pkg_check_modules(<NAME> ... <module>).
set(ZEUS_PKGCONFIG_MODULE_PQXX libpqxx)
set(ZEUS_DEB_fmt libfmt-dev)
set(ZEUS_DEB_nlohmann_json nlohmann-json3-dev)
set(ZEUS_DEB_Threads "")
set(ZEUS_DEB_CURL "libcurl4-openssl-dev | libcurl-dev")
set(ZEUS_DEB_SQLite libsqlite3-dev)
set(ZEUS_DEB_OpenSSL libssl-dev)
set(ZEUS_DEB_MPI libopenmpi-dev)
set(ZEUS_DEB_CLI11 libcli11-dev)
set(ZEUS_DEB_Boost libboost-dev)
set(ZEUS_DEB_LibLZMA liblzma-dev)
set(ZEUS_DEB_LibSVM libsvm-dev)
set(ZEUS_DEB_gRPC libgrpc++-dev "pkgconf | pkg-config")
set(ZEUS_DEB_protobuf libprotobuf-dev)
set(ZEUS_DEB_PkgConfig "pkgconf | pkg-config")
set(ZEUS_DEB_PkgConfig_PQXX libpqxx-dev)
set(ZEUS_PC_fmt::fmt fmt)
set(ZEUS_PC_nlohmann_json::nlohmann_json nlohmann_json)
set(ZEUS_PC_CURL::libcurl libcurl)
set(ZEUS_PC_SQLite::SQLite3 sqlite3)
set(ZEUS_PC_OpenSSL::Crypto libcrypto)
set(ZEUS_PC_PkgConfig::PQXX libpqxx)
set(ZEUS_PC_MPI::MPI_C ompi-c)
set(ZEUS_PC_gRPC::grpc++ grpc++)
set(ZEUS_PC_protobuf::libprotobuf protobuf)
set(ZEUS_PC_LibLZMA::LibLZMA liblzma)
# No .pc of its own (libsvm-dev ships none): link flags instead.
set(ZEUS_PC_LIBS_LibSVM::LibSVM -lsvm)

# The imported targets (NS::name) a target passes on to whoever links it.
function(zeus_link_interface_imports target out)
  get_target_property(libs ${target} INTERFACE_LINK_LIBRARIES)
  set(found "")
  foreach(lib ${libs})
    # $<LINK_ONLY:X> (a static library's private dependency) still needs X.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.+)>$" "\\1" lib "${lib}")
    if(lib MATCHES "^[A-Za-z0-9_]+::" AND NOT lib MATCHES "^Zeus::")
      list(APPEND found ${lib})
    elseif(IS_ABSOLUTE "${lib}")
      # The exported target would name this machine's file: a user's build
      # fails on it with make's "No rule to make target".
      message(FATAL_ERROR "zeus_install: ${target} links ${lib} by its path; the installed "
                          "find_package(Zeus) would name this machine's file. Link an imported "
                          "target found by name instead (see cmake/find/FindLibSVM.cmake).")
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# The zeus_* targets `target` links, directly or through one another.
function(zeus_link_closure target out)
  set(seen "")
  set(todo ${target})
  while(todo)
    list(POP_FRONT todo t)
    get_target_property(libs ${t} INTERFACE_LINK_LIBRARIES)
    foreach(lib ${libs})
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.+)>$" "\\1" lib "${lib}")
      if(lib MATCHES "^zeus_" AND TARGET ${lib} AND NOT lib IN_LIST seen)
        list(APPEND seen ${lib})
        list(APPEND todo ${lib})
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(zeus_install_package)
  get_property(parts GLOBAL PROPERTY ZEUS_BUILT_PARTS)
  get_property(all_parts GLOBAL PROPERTY ZEUS_PARTS)

  # Public headers: include/zeus/<DIR without src/>, less the folders of
  # parts nested in it (they install their own, or none when disabled); none
  # for the parts only the project's programs use (PROGRAMS_ONLY).
  foreach(part ${parts})
    get_property(programs_only GLOBAL PROPERTY ZEUS_PART_${part}_PROGRAMS_ONLY)
    if(programs_only)
      continue()
    endif()
    get_property(dir GLOBAL PROPERTY ZEUS_PART_${part}_DIR)
    string(REGEX REPLACE "^src/?" "" rel "${dir}")
    file(GLOB_RECURSE headers RELATIVE ${CMAKE_SOURCE_DIR}/include
         ${CMAKE_SOURCE_DIR}/include/zeus/${rel}/*.h)
    foreach(other ${all_parts})
      get_property(other_dir GLOBAL PROPERTY ZEUS_PART_${other}_DIR)
      string(FIND "${other_dir}/" "${dir}/" at)
      if(NOT other STREQUAL part AND at EQUAL 0)
        string(REGEX REPLACE "^src/?" "" other_rel "${other_dir}")
        list(FILTER headers EXCLUDE REGEX "^zeus/${other_rel}/")
      endif()
    endforeach()
    foreach(h ${headers})
      get_filename_component(hdir ${h} DIRECTORY)
      install(FILES ${CMAKE_SOURCE_DIR}/include/${h}
              DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${hdir} COMPONENT development)
    endforeach()
  endforeach()

  # Zeus::zeus: every installed part at once (as the build tree's zeus).
  install(TARGETS zeus EXPORT ZeusTargets COMPONENT development)
  install(EXPORT ZeusTargets NAMESPACE Zeus:: DESTINATION ${ZEUS_INSTALL_CMAKEDIR}
          COMPONENT development)

  # The dependencies ZeusConfig.cmake finds, from the parts' link interfaces:
  # required for the parts Zeus::zeus reaches (directly or through another
  # part: zeusd links the kubelet client), quiet for the others.
  zeus_link_closure(zeus in_zeus)
  set(required "")
  set(optional "")
  foreach(part ${parts})
    zeus_link_interface_imports(zeus_${part} part_imports)
    if(NOT zeus_${part} IN_LIST in_zeus)
      list(APPEND optional ${part_imports})
    else()
      list(APPEND required ${part_imports})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES required)
  list(REMOVE_DUPLICATES optional)
  if(required AND optional)
    list(REMOVE_ITEM optional ${required})
  endif()
  set(ZEUS_CONFIG_DEPENDENCIES "")
  set(deb_depends "")
  set(deb_suggests "")
  set(find_modules "")
  foreach(imp ${required} ${optional})
    string(REGEX MATCH "^[A-Za-z0-9_]+" ns "${imp}")
    string(REGEX REPLACE "^[A-Za-z0-9_]+::" "" tgt "${imp}")
    if(imp IN_LIST required)
      set(deb_list deb_depends)
    else()
      set(deb_list deb_suggests)
    endif()
    if(ns STREQUAL "PkgConfig" AND DEFINED ZEUS_PKGCONFIG_MODULE_${tgt})
      set(module ${ZEUS_PKGCONFIG_MODULE_${tgt}})
      list(APPEND ${deb_list} "${ZEUS_DEB_PkgConfig}" "${ZEUS_DEB_PkgConfig_${tgt}}")
      if(imp IN_LIST required)
        string(APPEND ZEUS_CONFIG_DEPENDENCIES
               "find_dependency(PkgConfig)\n"
               "pkg_check_modules(${tgt} QUIET IMPORTED_TARGET ${module})\n"
               "if(NOT ${tgt}_FOUND)\n"
               "  set(Zeus_NOT_FOUND_MESSAGE \"Zeus needs the pkg-config module ${module} "
               "(Debian: ${ZEUS_DEB_PkgConfig_${tgt}})\")\n"
               "  set(Zeus_FOUND FALSE)\n"
               "  return()\n"
               "endif()\n")
      else()
        string(APPEND ZEUS_CONFIG_DEPENDENCIES
               "find_package(PkgConfig QUIET)\n"
               "if(PKG_CONFIG_FOUND)\n"
               "  pkg_check_modules(${tgt} QUIET IMPORTED_TARGET ${module})\n"
               "endif()\n")
      endif()
    elseif(DEFINED ZEUS_FIND_${ns})
      set(args ${ZEUS_FIND_${ns}})
      list(GET args 0 package)
      if(NOT imp IN_LIST required)
        list(INSERT args 1 QUIET)
      endif()
      string(REPLACE ";" " " args "${args}")
      if(imp IN_LIST required)
        string(APPEND ZEUS_CONFIG_DEPENDENCIES "find_dependency(${args})\n")
      else()
        string(APPEND ZEUS_CONFIG_DEPENDENCIES "find_package(${args})\n")
      endif()
      list(APPEND ${deb_list} ${ZEUS_DEB_${ns}})
      if(EXISTS ${CMAKE_SOURCE_DIR}/cmake/find/Find${package}.cmake)
        list(APPEND find_modules ${CMAKE_SOURCE_DIR}/cmake/find/Find${package}.cmake)
      endif()
    else()
      message(FATAL_ERROR "zeus_install: no find_package known for ${imp}; add ZEUS_FIND_${ns} "
                          "and ZEUS_DEB_${ns} to cmake/zeus_install.cmake or find_package(Zeus) "
                          "will miss it")
    endif()
  endforeach()
  # Our own find modules (cmake/find/) go beside the config, found only by it.
  if(find_modules)
    install(FILES ${find_modules} DESTINATION ${ZEUS_INSTALL_CMAKEDIR}/modules
            COMPONENT development)
    string(PREPEND ZEUS_CONFIG_DEPENDENCIES
           "list(PREPEND CMAKE_MODULE_PATH \"\${CMAKE_CURRENT_LIST_DIR}/modules\")\n")
    string(APPEND ZEUS_CONFIG_DEPENDENCIES
           "list(REMOVE_ITEM CMAKE_MODULE_PATH \"\${CMAKE_CURRENT_LIST_DIR}/modules\")\n")
  endif()
  # libzeus-dev depends on what find_package(Zeus) requires (and zeus-*.pc
  # names), and suggests the rest (cmake/zeus_packaging.cmake).
  list(REMOVE_DUPLICATES deb_depends)
  list(REMOVE_DUPLICATES deb_suggests)
  if(deb_depends AND deb_suggests)
    list(REMOVE_ITEM deb_suggests ${deb_depends})
  endif()
  set_property(GLOBAL PROPERTY ZEUS_DEV_DEB_DEPENDS "${deb_depends}")
  set_property(GLOBAL PROPERTY ZEUS_DEV_DEB_SUGGESTS "${deb_suggests}")
  string(REGEX REPLACE "\n$" "" ZEUS_CONFIG_DEPENDENCIES "${ZEUS_CONFIG_DEPENDENCIES}")
  string(REPLACE ";" " " ZEUS_INSTALLED_PARTS "${parts}")
  configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/install/ZeusConfig.cmake.in
                                ${CMAKE_BINARY_DIR}/install/ZeusConfig.cmake
                                INSTALL_DESTINATION ${ZEUS_INSTALL_CMAKEDIR}
                                PATH_VARS ZEUS_INSTALL_DATADIR)
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/ZeusConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/install/ZeusConfig.cmake
                ${CMAKE_BINARY_DIR}/install/ZeusConfigVersion.cmake
          DESTINATION ${ZEUS_INSTALL_CMAKEDIR} COMPONENT development)

  # pkg-config: zeus-<part>.pc per part (its archive, the zeus-*.pc of the
  # parts it uses and the system modules it links), and zeus.pc for all.
  # Their prefix is relative to the .pc file (${pcfiledir}), as the CMake
  # package's is to its folder: `cmake --install --prefix P` and a moved
  # prefix both work (an absolute libdir or includedir stays absolute).
  file(RELATIVE_PATH ZEUS_PC_PREFIX_FROM_PCDIR "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" ZEUS_PC_PREFIX_FROM_PCDIR "${ZEUS_PC_PREFIX_FROM_PCDIR}")
  set(ZEUS_PC_PREFIX "\${pcfiledir}/${ZEUS_PC_PREFIX_FROM_PCDIR}")
  foreach(kind LIBDIR INCLUDEDIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
      set(ZEUS_PC_${kind} "${CMAKE_INSTALL_${kind}}")
    else()
      set(ZEUS_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
    endif()
  endforeach()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(ZEUS_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  endif()
  set(all_requires "")
  foreach(part ${parts})
    set(ZEUS_PC_NAME zeus-${part})
    set(ZEUS_PC_DESCRIPTION "the ${part} part")
    get_target_property(type zeus_${part} TYPE)
    set(ZEUS_PC_LIBS "")
    if(type STREQUAL "STATIC_LIBRARY")
      set(ZEUS_PC_LIBS " -lzeus_${part}")
    endif()
    set(requires "")
    get_target_property(libs zeus_${part} INTERFACE_LINK_LIBRARIES)
    foreach(lib ${libs})
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.+)>$" "\\1" lib "${lib}")
      if(lib MATCHES "^zeus_(.+)$")
        list(APPEND requires zeus-${CMAKE_MATCH_1})
      elseif(DEFINED ZEUS_PC_${lib})
        list(APPEND requires ${ZEUS_PC_${lib}})
      elseif(lib STREQUAL "Threads::Threads")
        string(APPEND ZEUS_PC_LIBS " -pthread")
      elseif(lib STREQUAL "${CMAKE_DL_LIBS}" AND CMAKE_DL_LIBS)
        string(APPEND ZEUS_PC_LIBS " -l${CMAKE_DL_LIBS}")
      elseif(DEFINED ZEUS_PC_LIBS_${lib})
        string(APPEND ZEUS_PC_LIBS " ${ZEUS_PC_LIBS_${lib}}")
      elseif(lib MATCHES "^[A-Za-z0-9_]+::")
        message(FATAL_ERROR "zeus_install: no pkg-config module known for ${lib} (zeus_${part}); "
                            "add ZEUS_PC_${lib} or ZEUS_PC_LIBS_${lib} to cmake/zeus_install.cmake")
      endif()
    endforeach()
    string(REPLACE ";" ", " ZEUS_PC_REQUIRES "${requires}")
    configure_file(${CMAKE_SOURCE_DIR}/cmake/install/zeus.pc.in
                   ${CMAKE_BINARY_DIR}/install/zeus-${part}.pc @ONLY)
    install(FILES ${CMAKE_BINARY_DIR}/install/zeus-${part}.pc
            DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
    if(NOT part IN_LIST ZEUS_PARTS_OUTSIDE_ZEUS)
      list(APPEND all_requires zeus-${part})
    endif()
  endforeach()
  set(ZEUS_PC_NAME zeus)
  set(ZEUS_PC_DESCRIPTION "every part (as Zeus::zeus; zeus-<part> for one part)")
  set(ZEUS_PC_LIBS "")
  string(REPLACE ";" ", " ZEUS_PC_REQUIRES "${all_requires}")
  configure_file(${CMAKE_SOURCE_DIR}/cmake/install/zeus.pc.in ${CMAKE_BINARY_DIR}/install/zeus.pc
                 @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/install/zeus.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)

  # Run-time data: every folder of data/ under <prefix>/share/zeus, where
  # zeus::data_dir() looks (next to the program: <bin>/../share/zeus). The
  # build tree mirrors the layout with links, so build/bin/zeus finds it too.
  file(GLOB data_sets LIST_DIRECTORIES true ${CMAKE_SOURCE_DIR}/data/*)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/zeus)
  foreach(set_dir ${data_sets})
    if(IS_DIRECTORY ${set_dir})
      get_filename_component(set_name ${set_dir} NAME)
      file(CREATE_LINK ${set_dir} ${CMAKE_BINARY_DIR}/share/zeus/${set_name} SYMBOLIC)
      install(DIRECTORY ${set_dir} DESTINATION ${ZEUS_INSTALL_DATADIR} COMPONENT runtime)
    endif()
  endforeach()
endfunction()
