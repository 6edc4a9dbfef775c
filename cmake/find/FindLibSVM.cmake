# Finds libsvm (Debian's libsvm-dev: <libsvm/svm.h>, libsvm.so) by name and
# defines the imported target LibSVM::LibSVM. Used by the build (the SVR
# forecaster of carbon_aware) and installed beside ZeusConfig.cmake, which
# finds it the same way on the user's machine: the installed package names
# the library, never the path it had where Zeus was built.
#
#   find_package(LibSVM)   # -> LibSVM_FOUND, LibSVM::LibSVM
find_path(LibSVM_INCLUDE_DIR NAMES libsvm/svm.h)
find_library(LibSVM_LIBRARY NAMES svm)
mark_as_advanced(LibSVM_INCLUDE_DIR LibSVM_LIBRARY)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibSVM REQUIRED_VARS LibSVM_LIBRARY LibSVM_INCLUDE_DIR)

if(LibSVM_FOUND AND NOT TARGET LibSVM::LibSVM)
  add_library(LibSVM::LibSVM UNKNOWN IMPORTED)
  set_target_properties(LibSVM::LibSVM PROPERTIES IMPORTED_LOCATION "${LibSVM_LIBRARY}"
                                                  INTERFACE_INCLUDE_DIRECTORIES "${LibSVM_INCLUDE_DIR}")
endif()
