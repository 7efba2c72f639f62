// What the GoogleTest suites include besides strand's headers: the
// libraries' set, GoogleTest and GoogleMock, and the few standard headers
// tests use more than the libraries do (cmake/PrecompiledHeaders.cmake).

#include <filesystem>
#include <fstream>
#include <random>
#include <tuple>

#include "cmake/precompiled/strand.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
