// Helpers shared by the tests.
#ifndef PULSE_TEST_UTIL_H
#define PULSE_TEST_UTIL_H

#include <catch2/catch.hpp>

#include "exec/InputRegions.h"
#include "exec/Interpreter.h"
#include "pulse/pulse.h"

namespace pulse::test {

/// Params from a list of (name, value).
inline Params params(std::initializer_list<std::pair<const char *, int64_t>> values) {
    Params p;
    for (const auto &v : values) p.set(v.first, v.second);
    return p;
}

/// Element of a buffer as a double, coordinates in the buffer's own index space.
inline double at(const Halide::Buffer<> &b, std::vector<int> coords) { return load_element(b, coords); }

/// |a - b| within a relative tolerance of float32 accumulation.
inline bool close(double a, double b, double tolerance = 1e-5) {
    return std::abs(a - b) <= tolerance * std::max(1.0, std::max(std::abs(a), std::abs(b)));
}

}  // namespace pulse::test

#endif
