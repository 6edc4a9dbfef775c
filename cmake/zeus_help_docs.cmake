# Man pages and bash completion from --help (packaging/help_docs.py walks
# every subcommand): zeus(1) in the runtime component, zeusd(8), a daemon's
# section, in the daemon component; the hand-written sections (ENVIRONMENT,
# EXIT STATUS, FILES, ...) are packaging/man/<name>.sections. Built with the
# programs (target zeus_help_docs); without python3 the build goes on
# without them.
find_program(ZEUS_DOCS_PYTHON NAMES python3 HINTS /usr/bin)
find_program(ZEUS_GZIP gzip)
if(CMAKE_CROSSCOMPILING)
  message(STATUS "Man pages and bash completion: off (cross-compiled programs cannot print their --help here)")
elseif(NOT ZEUS_DOCS_PYTHON OR NOT ZEUS_GZIP)
  message(STATUS "Man pages and bash completion: off (no python3 or gzip: apt-get install python3 gzip)")
else()
  set(ZEUS_HELP_DOCS "")
  set(ZEUS_HELP_DOCS_DIR ${CMAKE_BINARY_DIR}/packaging)
  foreach(entry zeus_cli:zeus:1:runtime zeusd:zeusd:8:daemon)
    string(REPLACE ":" ";" f ${entry})
    list(GET f 0 target)
    list(GET f 1 name)
    list(GET f 2 section)
    list(GET f 3 component)
    if(NOT TARGET ${target})
      continue()
    endif()
    set(page ${ZEUS_HELP_DOCS_DIR}/man/${name}.${section})
    set(completion ${ZEUS_HELP_DOCS_DIR}/bash-completion/${name})
    set(sections ${CMAKE_SOURCE_DIR}/packaging/man/${name}.sections)
    add_custom_command(
      OUTPUT ${page} ${page}.gz ${completion}
      # A sanitizer build's leak report is its tests' business, not the docs'.
      COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
              ${ZEUS_DOCS_PYTHON} ${CMAKE_SOURCE_DIR}/packaging/help_docs.py
              --program $<TARGET_FILE:${target}> --name ${name} --section ${section}
              --version ${PROJECT_VERSION} --sections ${sections} --man ${page}
              --completion ${completion}
      # Debian policy: compressed pages, no timestamp in the archive (-n).
      COMMAND ${ZEUS_GZIP} -9nfk ${page}
      DEPENDS ${target} ${CMAKE_SOURCE_DIR}/packaging/help_docs.py ${sections}
      COMMENT "Man page and bash completion of ${name} from its --help"
      VERBATIM)
    list(APPEND ZEUS_HELP_DOCS ${page}.gz ${completion})
    install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT ${component})
    install(FILES ${completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
            COMPONENT ${component})
  endforeach()
  add_custom_target(zeus_help_docs ALL DEPENDS ${ZEUS_HELP_DOCS})
endif()
