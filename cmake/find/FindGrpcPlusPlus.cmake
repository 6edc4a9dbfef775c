# Finds gRPC's C++ library by its pkg-config module grpc++ (Debian's
# libgrpc++-dev) and defines gRPC::grpc++, the target gRPC's own CMake package
# defines, unless that package was found already. Installed beside
# ZeusConfig.cmake: Debian's gRPCConfig.cmake also requires the code generator
# /usr/bin/grpc_cpp_plugin (protobuf-compiler-grpc), which a program that only
# links Zeus::zeus (zeusd's kubelet client) has no use for.
#
#   find_package(GrpcPlusPlus)   # -> GrpcPlusPlus_FOUND, gRPC::grpc++
if(TARGET gRPC::grpc++)
  set(GrpcPlusPlus_FOUND TRUE)
  return()
endif()
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(GrpcPlusPlus_PC QUIET IMPORTED_TARGET grpc++)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(GrpcPlusPlus REQUIRED_VARS GrpcPlusPlus_PC_FOUND
                                  VERSION_VAR GrpcPlusPlus_PC_VERSION)
if(GrpcPlusPlus_FOUND)
  add_library(gRPC::grpc++ INTERFACE IMPORTED)
  set_target_properties(gRPC::grpc++ PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::GrpcPlusPlus_PC)
endif()
