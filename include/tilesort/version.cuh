// version.cuh — tilesort's version, the one place it is written: CMake's
// project version (CMakeLists.txt, python/CMakeLists.txt) and the Python
// package's (pyproject.toml, tilesort.__version__) are read from this line.
#pragma once

/// @file
/// tilesort's version (`#include <tilesort/tilesort.cuh>` includes it).

/// tilesort's version as "MAJOR.MINOR.PATCH", e.g. `std::printf("tilesort %s\n", TILESORT_VERSION);`.
#define TILESORT_VERSION "0.1.0"
