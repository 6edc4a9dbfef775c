# Debian packages with CPack (`make package`, docs/install.md): one package
# per install component (cmake/zeus_install.cmake), so the install rules are
# the single list of what ships. CPack rather than debian/ + debhelper: the
# packages are built from the same CMake build the tests use, by the same
# rules `cmake --install` follows, with no second build system to keep in
# step; dpkg-shlibdeps still computes the run-time dependencies.
#
#   zeus            the zeus command and its data (share/zeus)
#   libzeus-dev     static libraries, headers, find_package(Zeus), zeus-*.pc
#   zeusd           the daemon, its hardened systemd unit, /etc/default/zeusd,
#                   the group zeusd for socket users
#   python3-zeuscpp the zeuscpp module for Debian's python3
#   zeus-slurm      the SPANK plugin spank_zeus.so, a commented
#                   plugstack.conf.d snippet, docs/slurm.md (when libslurm-dev
#                   was found)
#
# Configure with -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc
# (make package does).
set(ZEUS_DEB_DIR ${CMAKE_SOURCE_DIR}/packaging/debian)
# Whoever builds the packages maintains them: their name and address go in the
# control files and changelogs (lintian flags the placeholder's host).
set(ZEUS_DEB_MAINTAINER "Zeus in C++ maintainers <zeus-cpp@localhost>" CACHE STRING
    "Maintainer of the Debian packages (make package)")

# Man pages and bash completion: cmake/zeus_help_docs.cmake (before the tests,
# which check them).

# The daemon's system files (the daemon component).
if(TARGET zeusd)
  set(ZEUS_SYSTEMD_UNITDIR "lib/systemd/system" CACHE STRING
      "Where the zeusd unit goes (relative to the prefix, or absolute)")
  set(ZEUSD_SOCKET /run/zeusd/zeusd.sock)
  set(ZEUS_BINDIR ${CMAKE_INSTALL_FULL_BINDIR})
  set(ZEUS_SYSCONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR})
  set(ZEUS_DOCDIR ${CMAKE_INSTALL_FULL_DATADIR}/doc/zeusd)
  configure_file(${CMAKE_SOURCE_DIR}/packaging/zeusd/zeusd.service.in
                 ${CMAKE_BINARY_DIR}/packaging/zeusd.service @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/packaging/zeusd.service DESTINATION ${ZEUS_SYSTEMD_UNITDIR}
          COMPONENT daemon)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/zeusd/default RENAME zeusd
          DESTINATION ${CMAKE_INSTALL_SYSCONFDIR}/default COMPONENT daemon)
  install(FILES ${CMAKE_SOURCE_DIR}/docs/install.md ${CMAKE_SOURCE_DIR}/docs/zeusd.md
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/zeusd COMPONENT daemon)
endif()

# The Slurm plugin's files (the slurm component): the snippet names the
# plugin's installed path, and stays commented (installing enables nothing).
if(TARGET spank_zeus)
  set(ZEUS_SPANK_PLUGIN_PATH ${CMAKE_INSTALL_FULL_LIBDIR}/slurm-wlm/spank_zeus.so)
  configure_file(${CMAKE_SOURCE_DIR}/packaging/slurm/zeus.conf.in
                 ${CMAKE_BINARY_DIR}/packaging/slurm/zeus.conf @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/packaging/slurm/zeus.conf
          DESTINATION ${CMAKE_INSTALL_SYSCONFDIR}/slurm/plugstack.conf.d COMPONENT slurm)
  install(FILES ${CMAKE_SOURCE_DIR}/docs/slurm.md
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/zeus-slurm COMPONENT slurm)
endif()

# Every package carries /usr/share/doc/<package>/copyright (Debian policy 12.5)
# and a changelog.
set(ZEUS_DEB_PACKAGES runtime:zeus development:libzeus-dev daemon:zeusd python:python3-zeuscpp)
if(TARGET spank_zeus)
  list(APPEND ZEUS_DEB_PACKAGES slurm:zeus-slurm)
endif()
string(TIMESTAMP ZEUS_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
foreach(entry ${ZEUS_DEB_PACKAGES})
  string(REPLACE ":" ";" pair ${entry})
  list(GET pair 0 component)
  list(GET pair 1 package)
  file(WRITE ${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian
       "${package} (${PROJECT_VERSION}-1) unstable; urgency=medium\n\n"
       "  * Built from the Zeus in C++ tree (make package).\n\n"
       " -- ${ZEUS_DEB_MAINTAINER}  ${ZEUS_DEB_DATE}\n")
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian.gz
                     COMMAND gzip -9nf -k ${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian
                     DEPENDS ${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian)
  list(APPEND ZEUS_DEB_CHANGELOGS ${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian.gz)
  install(FILES ${ZEUS_DEB_DIR}/copyright.in RENAME copyright
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component})
  install(FILES ${CMAKE_BINARY_DIR}/packaging/${package}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component})
endforeach()
add_custom_target(zeus_deb_changelogs ALL DEPENDS ${ZEUS_DEB_CHANGELOGS})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME zeus)
set(CPACK_PACKAGE_VENDOR "Zeus in C++")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${ZEUS_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "measure and optimize the energy of deep-learning work")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development)
if(TARGET zeuscpp_core)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
if(TARGET zeusd)
  list(APPEND CPACK_COMPONENTS_ALL daemon)
endif()
if(TARGET spank_zeus)
  list(APPEND CPACK_COMPONENTS_ALL slurm)
endif()
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://ml.energy/zeus/")
# Run-time dependencies computed by dpkg-shlibdeps from the ELF files.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Debug information stays in the build tree, not in the packages.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME zeus)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION science)
# The figures of `zeus simulate paper` / `chase`, `zeus perseus` and the
# emulation reports are drawn by gnuplot (without it the command stops with
# exit status 2 and says so; --no-plots skips them). Recommends: apt installs
# it by default, and a machine that only measures can leave it out.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "gnuplot-nox | gnuplot")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "energy measurement and optimization for deep learning (CLI)\n"
    "The zeus command: energy windows on NVIDIA and AMD GPUs and RAPL CPUs (or a\n"
    "simulated GPU), the power-limit optimizer, the trace-driven simulator, the\n"
    "Perseus planner and the batch-size optimizer service.")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libzeus-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
# What find_package(Zeus) and zeus-*.pc need to link Zeus::zeus (the
# libraries are static: every -dev package of what the parts link), computed
# with the config's dependencies (cmake/zeus_install.cmake); the packages of
# the parts outside Zeus::zeus (MPI, gRPC) are suggested.
get_property(ZEUS_DEV_DEB_DEPENDS GLOBAL PROPERTY ZEUS_DEV_DEB_DEPENDS)
get_property(ZEUS_DEV_DEB_SUGGESTS GLOBAL PROPERTY ZEUS_DEV_DEB_SUGGESTS)
list(APPEND ZEUS_DEV_DEB_SUGGESTS cmake)
list(JOIN ZEUS_DEV_DEB_DEPENDS ", " CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS)
list(JOIN ZEUS_DEV_DEB_SUGGESTS ", " CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SUGGESTS)
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
    "Zeus in C++ library: headers, static libraries, CMake package\n"
    "find_package(Zeus) with one target per part (Zeus::monitor,\n"
    "Zeus::power_limit, ...) and pkg-config files zeus-<part>.pc.")

set(CPACK_DEBIAN_DAEMON_PACKAGE_NAME zeusd)
set(CPACK_DEBIAN_DAEMON_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_DAEMON_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_EXTRA
    ${CMAKE_BINARY_DIR}/packaging/zeusd-control/postinst
    ${CMAKE_BINARY_DIR}/packaging/zeusd-control/prerm
    ${CMAKE_BINARY_DIR}/packaging/zeusd-control/postrm
    ${CMAKE_BINARY_DIR}/packaging/zeusd-control/conffiles)
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_STRICT_PERMISSION ON)
foreach(script postinst prerm postrm conffiles)
  file(COPY ${ZEUS_DEB_DIR}/zeusd.${script} DESTINATION ${CMAKE_BINARY_DIR}/packaging/zeusd-control)
  file(RENAME ${CMAKE_BINARY_DIR}/packaging/zeusd-control/zeusd.${script}
       ${CMAKE_BINARY_DIR}/packaging/zeusd-control/${script})
endforeach()
set(CPACK_COMPONENT_DAEMON_DESCRIPTION
    "Zeus node daemon (GPU control, RAPL, power streaming)\n"
    "zeusd serves GPU settings, RAPL energy and power streams to unprivileged\n"
    "processes over a Unix socket (members of the group zeusd) with optional\n"
    "JWT tokens and leases that restore settings when a client dies, and\n"
    "Prometheus metrics. Ships a hardened systemd unit.")

set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-zeuscpp)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
# The module is built for this interpreter's ABI (cpython-3XY).
get_property(ZEUS_PY_VERSION GLOBAL PROPERTY ZEUS_PYTHON_VERSION)
if(ZEUS_PY_VERSION MATCHES "^([0-9]+)\\.([0-9]+)$")
  math(EXPR ZEUS_PY_NEXT "${CMAKE_MATCH_2} + 1")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
      "python3 (>= ${ZEUS_PY_VERSION}), python3 (<< ${CMAKE_MATCH_1}.${ZEUS_PY_NEXT})")
endif()
set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "python3-numpy")
set(CPACK_DEBIAN_PYTHON_PACKAGE_SUGGESTS "python3-torch, zeus")
set(CPACK_COMPONENT_PYTHON_DESCRIPTION
    "Zeus in C++ for Python (zeuscpp)\n"
    "The Python Zeus's API (zeuscpp.monitor, zeuscpp.optimizer.power_limit, ...)\n"
    "on the C++ library: swap zeus for zeuscpp in the imports.")
# The plugin is loaded only by the Slurm release it was built against
# (slurmstepd compares plugin_version with its own major.minor).
if(TARGET spank_zeus)
  file(STRINGS ${ZEUS_SPANK_INCLUDE_DIR}/slurm/slurm_version.h ZEUS_SLURM_VERSION_LINE
       REGEX "^#define SLURM_VERSION_NUMBER")
  set(CPACK_DEBIAN_SLURM_PACKAGE_NAME zeus-slurm)
  set(CPACK_DEBIAN_SLURM_PACKAGE_SECTION admin)
  # 0xMMmmuu: Debian's slurmd is versioned MM.mm.uu, minor with two digits.
  if(ZEUS_SLURM_VERSION_LINE MATCHES "0x([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
    math(EXPR ZEUS_SLURM_MAJOR "0x${CMAKE_MATCH_1}")
    math(EXPR ZEUS_SLURM_MINOR "0x${CMAKE_MATCH_2}")
    math(EXPR ZEUS_SLURM_NEXT "${ZEUS_SLURM_MINOR} + 1")
    foreach(v ZEUS_SLURM_MINOR ZEUS_SLURM_NEXT)
      if(${v} LESS 10)
        set(${v} "0${${v}}")
      endif()
    endforeach()
    set(CPACK_DEBIAN_SLURM_PACKAGE_DEPENDS
        "slurmd (>= ${ZEUS_SLURM_MAJOR}.${ZEUS_SLURM_MINOR}), slurmd (<< ${ZEUS_SLURM_MAJOR}.${ZEUS_SLURM_NEXT})")
  endif()
  set(CPACK_DEBIAN_SLURM_PACKAGE_RECOMMENDS "zeusd")
  set(CPACK_DEBIAN_SLURM_PACKAGE_SUGGESTS "zeus")
  set(CPACK_DEBIAN_SLURM_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/packaging/zeus-slurm-control/conffiles)
  file(COPY ${ZEUS_DEB_DIR}/zeus-slurm.conffiles DESTINATION ${CMAKE_BINARY_DIR}/packaging/zeus-slurm-control)
  file(RENAME ${CMAKE_BINARY_DIR}/packaging/zeus-slurm-control/zeus-slurm.conffiles
       ${CMAKE_BINARY_DIR}/packaging/zeus-slurm-control/conffiles)
  # One string (separate arguments would be joined with ';').
  string(CONCAT CPACK_COMPONENT_SLURM_DESCRIPTION
      "Energy per Slurm job with Zeus (SPANK plugin)\n"
      "spank_zeus.so tells the node's zeusd which processes and GPUs each job step\n"
      "has and, at the step's end, writes the step's GPU and CPU energy from\n"
      "zeusd's conserved ledger to a record per step and to the job's\n"
      "AdminComment; shared nodes and GPUs included. Enable it in\n"
      "/etc/slurm/plugstack.conf.d/zeus.conf; read it with `zeus slurm report`.")
endif()
include(CPack)
