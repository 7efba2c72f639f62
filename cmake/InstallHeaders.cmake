# Run by `cmake --install` (StrandInstall.cmake): installs strand's headers
# so that an application includes "strand/..." and nothing else of ours.
#
#   <prefix>/include/strand/*.h            the public API (include/strand/)
#   <prefix>/include/strand/internal/...   the layer headers those include,
#                                          as internal/<layer>/<file>.h
#
# Every strand include in them is rewritten to its installed path
# ("engine/engine.h" -> "strand/internal/engine/engine.h"), so the
# application's include path is <prefix>/include alone, and no header of
# ours can pick up a same-named header of the application's ("base/...",
# "index/...") or be picked up in its place.
#
# Expects SOURCE_DIR, INCLUDE_DIR (where to install, DESTDIR included) and
# LAYERS (the layer folders, ;-separated).

set(layer_pattern "")
foreach(layer IN LISTS LAYERS)
  if(layer_pattern)
    string(APPEND layer_pattern "|")
  endif()
  string(APPEND layer_pattern "${layer}")
endforeach()

# Copies SOURCE to DESTINATION with strand's includes rewritten.
function(strand_install_header source destination)
  file(READ "${source}" text)
  string(REGEX REPLACE "#include \"(${layer_pattern})/"
         "#include \"strand/internal/\\1/" text "${text}")
  set(old "")
  if(EXISTS "${destination}")
    file(READ "${destination}" old)
  endif()
  if(NOT old STREQUAL text)
    message(STATUS "Installing: ${destination}")
    file(WRITE "${destination}" "${text}")
  else()
    message(STATUS "Up-to-date: ${destination}")
  endif()
  set(CMAKE_INSTALL_MANIFEST_FILES ${CMAKE_INSTALL_MANIFEST_FILES}
      "${destination}" PARENT_SCOPE)
endfunction()

file(GLOB public RELATIVE "${SOURCE_DIR}/include/strand"
     "${SOURCE_DIR}/include/strand/*.h")
foreach(header IN LISTS public)
  strand_install_header("${SOURCE_DIR}/include/strand/${header}"
                        "${INCLUDE_DIR}/strand/${header}")
endforeach()
foreach(layer IN LISTS LAYERS)
  file(GLOB_RECURSE internal RELATIVE "${SOURCE_DIR}"
       "${SOURCE_DIR}/${layer}/*.h")
  foreach(header IN LISTS internal)
    strand_install_header("${SOURCE_DIR}/${header}"
                          "${INCLUDE_DIR}/strand/internal/${header}")
  endforeach()
endforeach()
