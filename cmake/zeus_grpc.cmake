# C++ from a .proto with a gRPC service, generated at build time into the
# build tree (needs find_package(Protobuf) and find_package(gRPC CONFIG)).
#
# zeus_add_grpc_sources(TARGET PROTO) runs protoc with grpc_cpp_plugin on PROTO
# (a path under src/) and adds the messages and the service to TARGET. The
# generated headers mirror PROTO's path under <build>/generated/proto, so
# src/a/b/x.proto is included as "a/b/x.pb.h" and "a/b/x.grpc.pb.h": a private
# header of the part that owns src/a/b, as the layering check expects.
#
# The generated code is not ours: it compiles in an object library without the
# project's warning flags, and its folder is a SYSTEM include of TARGET, so
# -Werror judges only our files. The object library's INTERFACE include
# directories are that folder, for test code that implements the service
# (tests/fakes/kubelet): $<TARGET_PROPERTY:<TARGET>_proto,INTERFACE_INCLUDE_DIRECTORIES>.
function(zeus_add_grpc_sources target proto)
  set(out_root ${CMAKE_BINARY_DIR}/generated/proto)
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/${proto})
  string(REGEX REPLACE "\\.proto$" "" stem "${rel}")
  set(outputs ${out_root}/${stem}.pb.cc ${out_root}/${stem}.pb.h ${out_root}/${stem}.grpc.pb.cc
              ${out_root}/${stem}.grpc.pb.h)
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_root}
    COMMAND protobuf::protoc --proto_path=${CMAKE_SOURCE_DIR}/src --cpp_out=${out_root}
            --grpc_out=${out_root} --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>
            ${CMAKE_SOURCE_DIR}/${proto}
    DEPENDS ${CMAKE_SOURCE_DIR}/${proto} protobuf::protoc gRPC::grpc_cpp_plugin
    COMMENT "Generating C++ from ${rel} (protoc, grpc_cpp_plugin)"
    VERBATIM)
  add_library(${target}_proto OBJECT ${outputs})
  target_include_directories(${target}_proto SYSTEM PUBLIC ${out_root})
  target_link_libraries(${target}_proto PUBLIC gRPC::grpc++ protobuf::libprotobuf)
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:${target}_proto>)
  target_include_directories(${target} SYSTEM PRIVATE ${out_root})
  target_link_libraries(${target} PRIVATE gRPC::grpc++ protobuf::libprotobuf)
  add_dependencies(${target} ${target}_proto)
endfunction()
