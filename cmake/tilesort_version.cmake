# TILESORT_VERSION: tilesort's version, read from include/tilesort/version.cuh
# (the one place it is written), for project(... VERSION ${TILESORT_VERSION}).
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/../include/tilesort/version.cuh tilesort_version_line
     REGEX "^#define TILESORT_VERSION \"[0-9]+\\.[0-9]+\\.[0-9]+\"$")
if(NOT tilesort_version_line)
  message(FATAL_ERROR "no '#define TILESORT_VERSION \"MAJOR.MINOR.PATCH\"' line in include/tilesort/version.cuh")
endif()
string(REGEX REPLACE ".*\"(.*)\".*" "\\1" TILESORT_VERSION "${tilesort_version_line}")
