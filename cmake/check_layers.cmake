# Fails when a file of the library includes a header of a later layer, or
# when a front end (tools/neardup, tools/neardup_mpi, python/) includes a
# header of src/.
#   cmake -DSOURCE_DIR=<repo> -DSTAMP=<file to touch on success> -P check_layers.cmake
#
# The layers, in order (each may include its own headers and those of the
# layers before it). The lists name src/<module> directories and the public
# headers include/neardup/<name>.h of each layer; a public header not listed
# here is an error too, so that a new header is given its layer.
set(LAYERS core text nlp engine store eval)
set(core_MODULES util fingerprint index dedup)
set(core_HEADERS status parallel file fingerprint minhash index band_join band_bucket dedup
    dedup_groups minhash_dedup document_index)
set(text_MODULES text extract)
set(text_HEADERS text code_points compression extract boilerplate)
set(nlp_MODULES segment keywords features)
set(nlp_HEADERS segmenter idf keywords features pipeline presets method options)
set(engine_MODULES engine)
set(engine_HEADERS engine document_pass dedup_job dedup_over_ranks text_index)
set(store_MODULES store)
set(store_HEADERS store)
set(eval_MODULES eval)
set(eval_HEADERS eval)

# layer_of_<module|header> -> the layer's index.
set(index 0)
foreach(layer ${LAYERS})
  foreach(m ${${layer}_MODULES})
    set(module_${m} ${index})
  endforeach()
  foreach(h ${${layer}_HEADERS})
    set(header_${h} ${index})
  endforeach()
  math(EXPR index "${index} + 1")
endforeach()

set(errors "")
set(index 0)
foreach(layer ${LAYERS})
  set(files)
  foreach(m ${${layer}_MODULES})
    file(GLOB found ${SOURCE_DIR}/src/${m}/*.cc ${SOURCE_DIR}/src/${m}/*.h)
    list(APPEND files ${found})
  endforeach()
  foreach(h ${${layer}_HEADERS})
    if(EXISTS ${SOURCE_DIR}/include/neardup/${h}.h)
      list(APPEND files ${SOURCE_DIR}/include/neardup/${h}.h)
    endif()
  endforeach()
  foreach(f ${files})
    file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"]+\"")
    foreach(line ${includes})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*$" "\\1" inc "${line}")
      set(target_layer "")
      if(inc MATCHES "^neardup/([a-z_0-9]+)\\.h$")
        set(name ${CMAKE_MATCH_1})
        if(NOT DEFINED header_${name})
          string(APPEND errors "  ${f}: includes ${inc}, a public header with no layer "
                               "(add it to cmake/check_layers.cmake)\n")
          continue()
        endif()
        set(target_layer ${header_${name}})
      elseif(inc MATCHES "^([a-z_0-9]+)/[^/]+$")
        # ${} is expanded before MATCHES runs: read the match on the next line.
        set(module ${CMAKE_MATCH_1})
        if(DEFINED module_${module})
          set(target_layer ${module_${module}})
        endif()
      endif()
      if(NOT target_layer STREQUAL "" AND target_layer GREATER index)
        list(GET LAYERS ${target_layer} higher)
        file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
        string(APPEND errors "  ${rel}: layer ${layer} includes ${inc} of the later layer ${higher}\n")
      endif()
    endforeach()
  endforeach()
  math(EXPR index "${index} + 1")
endforeach()

# Every public header belongs to a layer.
file(GLOB public ${SOURCE_DIR}/include/neardup/*.h)
foreach(f ${public})
  get_filename_component(name ${f} NAME_WE)
  if(NOT DEFINED header_${name})
    string(APPEND errors "  include/neardup/${name}.h has no layer (add it to cmake/check_layers.cmake)\n")
  endif()
endforeach()

# The front ends are user programs of the library: tools/neardup,
# tools/neardup_mpi and python/ include the public headers (neardup/*.h) and
# headers of their own folder, never one of src/ (their include path has no
# src/ either). neardup-mpi takes neardup dedup's flags and writes its
# outputs the same way: it may include the headers of the command line's
# shared code (neardup_tool_shared in CMakeLists.txt), named here.
set(tool_shared_HEADERS common.h dedup_stages.h output_files.h)
file(GLOB front_end_files ${SOURCE_DIR}/tools/neardup/*.cc ${SOURCE_DIR}/tools/neardup/*.h
     ${SOURCE_DIR}/tools/neardup_mpi/*.cc ${SOURCE_DIR}/tools/neardup_mpi/*.h
     ${SOURCE_DIR}/python/*.cc ${SOURCE_DIR}/python/*.h)
foreach(f ${front_end_files})
  get_filename_component(dir ${f} DIRECTORY)
  get_filename_component(dir_name ${dir} NAME)
  file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"]+\"")
  foreach(line ${includes})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*$" "\\1" inc "${line}")
    if(inc MATCHES "^neardup/[a-z_0-9]+\\.h$" OR EXISTS ${dir}/${inc})
      continue()
    endif()
    list(FIND tool_shared_HEADERS "${inc}" shared)
    if(dir_name STREQUAL "neardup_mpi" AND shared GREATER -1)
      continue()
    endif()
    file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
    string(APPEND errors "  ${rel}: includes \"${inc}\", which is not a public header "
                         "(include/neardup/*.h): a front end uses the library through its "
                         "public headers only\n")
  endforeach()
endforeach()

if(errors)
  message(FATAL_ERROR "neardup's layers (doc/design.md) are broken:\n${errors}")
endif()
file(TOUCH ${STAMP})
