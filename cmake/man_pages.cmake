# Writes man pages with help2man from a program's own --help (CMakeLists.txt,
# "Man pages"): OUT_DIR/NAME.1.gz and, for each subcommand that
# `PROGRAM --help` lists, OUT_DIR/NAME-SUBCOMMAND.1.gz. The subcommands are
# read from the help itself, so a new one gets its page without an edit here.
#   cmake -DHELP2MAN=... -DPROGRAM=... -DNAME=... -DVERSION=... -DDESCRIPTION=...
#         -DOUT_DIR=... -P man_pages.cmake
execute_process(COMMAND ${PROGRAM} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --help exited with ${rc}")
endif()
# "Subcommands:" lines: two spaces, the name, spaces, the description.
set(subcommands)
set(in_subcommands OFF)
# Characters that mean something in a CMake list go first.
string(REGEX REPLACE "[];[\\]" " " help "${help}")
string(REPLACE "\n" ";" lines "${help}")
foreach(line IN LISTS lines)
  if(line MATCHES "^Subcommands:")
    set(in_subcommands ON)
  elseif(in_subcommands AND line MATCHES "^  ([a-z][a-z0-9-]*)  +([^.;(]*)")
    list(APPEND subcommands ${CMAKE_MATCH_1})
    string(STRIP "${CMAKE_MATCH_2}" what_${CMAKE_MATCH_1})
  elseif(in_subcommands AND NOT line MATCHES "^  ")
    set(in_subcommands OFF)
  endif()
endforeach()

file(MAKE_DIRECTORY ${OUT_DIR}/bin)
set(see_also)
foreach(sub IN LISTS subcommands)
  list(APPEND see_also "\\fB${NAME}-${sub}\\fR(1)")
endforeach()
set(include_file ${OUT_DIR}/${NAME}.h2m)
if(see_also)
  list(JOIN see_also ", " see_also)
  file(WRITE ${include_file} "[SEE ALSO]\n${see_also}; the documentation in doc/ of the source tree.\n")
else()
  file(WRITE ${include_file} "[SEE ALSO]\n\\fBneardup\\fR(1); the documentation in doc/ of the source tree.\n")
endif()

function(write_page program page description include)
  set(args --no-info --no-discard-stderr --version-string=${VERSION} --name=${description}
      --output=${OUT_DIR}/${page}.1)
  if(include)
    list(APPEND args --include=${include})
  endif()
  execute_process(COMMAND ${HELP2MAN} ${args} ${program} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man ${program}: ${err}")
  endif()
  execute_process(COMMAND gzip -9nf ${OUT_DIR}/${page}.1 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${OUT_DIR}/${page}.1 failed")
  endif()
endfunction()

foreach(sub IN LISTS subcommands)
  # help2man names the page after the program it runs: a wrapper NAME-SUB.
  set(wrapper ${OUT_DIR}/bin/${NAME}-${sub})
  file(WRITE ${wrapper} "#!/bin/sh\nexec '${PROGRAM}' ${sub} \"$@\"\n")
  file(CHMOD ${wrapper} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  file(WRITE ${OUT_DIR}/${NAME}-${sub}.h2m "[SEE ALSO]\n\\fB${NAME}\\fR(1)\n")
  write_page(${wrapper} ${NAME}-${sub} "${what_${sub}}" ${OUT_DIR}/${NAME}-${sub}.h2m)
endforeach()
# The main page last: its output is the custom command's stamp.
write_page(${PROGRAM} ${NAME} "${DESCRIPTION}" ${include_file})
