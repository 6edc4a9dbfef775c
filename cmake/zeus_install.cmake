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
# names: the namespace of the imported target -> the find call (and for
# pkg-config targets the module), and its pkg-config module for zeus-*.pc. The
# measurement parts' dependencies are required; a service part's are looked
# for quietly, so a program that links only Zeus::monitor needs none of them
# (CMake complains only when a target that needs a missing one is linked).
# A part that brings a new imported dependency adds its lines here;
# configuring warns until it does.
set(ZEUS_FIND_fmt "find_dependency(fmt)")
set(ZEUS_FIND_nlohmann_json "find_dependency(nlohmann_json)")
set(ZEUS_FIND_Threads "find_dependency(Threads)")
set(ZEUS_FIND_CURL "find_package(CURL QUIET)")
set(ZEUS_FIND_SQLite "find_package(SQLite3 QUIET)")
set(ZEUS_FIND_OpenSSL "find_package(OpenSSL QUIET COMPONENTS Crypto)")
set(ZEUS_FIND_MPI "find_package(MPI QUIET COMPONENTS C)")
set(ZEUS_FIND_CLI11 "find_dependency(CLI11)")
set(ZEUS_FIND_Boost "find_package(Boost QUIET)")
set(ZEUS_FIND_LibLZMA "find_package(LibLZMA QUIET)")
set(ZEUS_FIND_gRPC "find_package(gRPC CONFIG QUIET)")
set(ZEUS_FIND_protobuf "find_package(Protobuf QUIET)")
set(ZEUS_PKGCONFIG_MODULE_PQXX libpqxx)
set(ZEUS_PC_fmt::fmt fmt)
set(ZEUS_PC_nlohmann_json::nlohmann_json nlohmann_json)
set(ZEUS_PC_CURL::libcurl libcurl)
set(ZEUS_PC_SQLite::SQLite3 sqlite3)
set(ZEUS_PC_OpenSSL::Crypto libcrypto)
set(ZEUS_PC_PkgConfig::PQXX libpqxx)
set(ZEUS_PC_MPI::MPI_C ompi-c)
set(ZEUS_PC_gRPC::grpc++ grpc++)
set(ZEUS_PC_protobuf::libprotobuf protobuf)

# The imported targets (NS::name) a target passes on to whoever links it.
function(zeus_link_interface_imports target out)
  get_target_property(libs ${target} INTERFACE_LINK_LIBRARIES)
  set(found "")
  foreach(lib ${libs})
    # $<LINK_ONLY:X> (a static library's private dependency) still needs X.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.+)>$" "\\1" lib "${lib}")
    if(lib MATCHES "^[A-Za-z0-9_]+::" AND NOT lib MATCHES "^Zeus::")
      list(APPEND found ${lib})
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(zeus_install_package)
  get_property(parts GLOBAL PROPERTY ZEUS_BUILT_PARTS)
  get_property(all_parts GLOBAL PROPERTY ZEUS_PARTS)

  # Public headers: include/zeus/<DIR without src/>, less the folders of
  # parts nested in it (they install their own, or none when disabled).
  foreach(part ${parts})
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

  # The dependencies ZeusConfig.cmake finds, from the parts' link interfaces.
  set(imports "")
  foreach(part ${parts})
    zeus_link_interface_imports(zeus_${part} part_imports)
    list(APPEND imports ${part_imports})
  endforeach()
  list(REMOVE_DUPLICATES imports)
  set(ZEUS_CONFIG_DEPENDENCIES "")
  foreach(imp ${imports})
    string(REGEX MATCH "^[A-Za-z0-9_]+" ns "${imp}")
    string(REGEX REPLACE "^[A-Za-z0-9_]+::" "" tgt "${imp}")
    if(ns STREQUAL "PkgConfig" AND DEFINED ZEUS_PKGCONFIG_MODULE_${tgt})
      string(APPEND ZEUS_CONFIG_DEPENDENCIES
             "find_package(PkgConfig QUIET)\n"
             "if(PKG_CONFIG_FOUND)\n"
             "  pkg_check_modules(${tgt} QUIET IMPORTED_TARGET ${ZEUS_PKGCONFIG_MODULE_${tgt}})\n"
             "endif()\n")
    elseif(DEFINED ZEUS_FIND_${ns})
      string(APPEND ZEUS_CONFIG_DEPENDENCIES "${ZEUS_FIND_${ns}}\n")
    else()
      message(WARNING "zeus_install: no find_dependency known for ${imp}; add "
                      "ZEUS_FIND_${ns} to cmake/zeus_install.cmake or find_package(Zeus) "
                      "will miss it")
    endif()
  endforeach()
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
