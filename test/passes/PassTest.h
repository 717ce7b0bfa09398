// Helpers for the tests of one kernel pass each (test/passes/test_PASS.cpp):
// a kernel built by hand, the pass run alone, its result compared node by
// node with the expected IR (Halide's `equal`), and the kernel executor run
// before and after on the same random buffers.
#ifndef PULSE_TEST_PASS_TEST_H
#define PULSE_TEST_PASS_TEST_H

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "exec/InputRegions.h"
#include "exec/KernelExecutor.h"
#include "exec/Simulator.h"
#include "ir/KernelIR.h"

namespace pulse::test {

/// A buffer argument of a hand-built kernel (global placement, register cache).
inline kir::BufferArg buffer_arg(const std::string &name, Halide::Type type, int dimensions, bool is_output) {
    kir::BufferArg b;
    b.name = name;
    b.type = type;
    b.dimensions = dimensions;
    b.is_output = is_output;
    return b;
}

/// `lane` and `warp.index` as the kernel IR names them.
inline Halide::Expr lane() { return Halide::Internal::Variable::make(Halide::Int(32), kir::lane_var); }

/// Buffers for `kernel`: each buffer of it with the extents given (mins 0),
/// inputs random in [-9, 9] (integers) or [-1, 1] (floats), outputs poisoned.
inline Buffers make_buffers(const kir::Kernel &kernel, const std::map<std::string, std::vector<int>> &extents, uint32_t seed) {
    std::mt19937 rng(seed);
    Buffers buffers;
    for (const kir::BufferArg &b : kernel.buffers) {
        const std::vector<int> &shape = extents.at(b.name);
        Halide::Buffer<> buffer(b.type, shape);
        if (b.is_output) {
            poison(buffer);
        } else {
            buffer.for_each_element([&](const int *pos) {
                std::vector<int> coords(pos, pos + shape.size());
                Scalar v = b.type.is_float() ? Scalar::of_double(std::uniform_real_distribution<double>(-1, 1)(rng))
                                             : Scalar::of_int(std::uniform_int_distribution<int>(-9, 9)(rng));
                store_element(buffer, coords, Scalar::cast(v, b.type.is_float() ? Halide::Float(64) : Halide::Int(64), b.type));
            });
        }
        buffers[b.name] = buffer;
    }
    return buffers;
}

/// Runs `before` and `after` on copies of `buffers`; returns "" if every
/// output is the same, else the first difference (or an executor error).
inline std::string same_outputs(const kir::Kernel &before, const kir::Kernel &after, const Buffers &buffers) {
    auto run = [&](const kir::Kernel &k, Buffers &out) -> std::string {
        for (const auto &[name, b] : buffers) out[name] = b.copy();
        try {
            execute_kernel(k, out);
        } catch (const std::exception &e) {
            return std::string("kernel ") + (&k == &before ? "before" : "after") + " the pass: " + e.what();
        }
        return "";
    };
    Buffers a, b;
    if (std::string e = run(before, a); !e.empty()) return e;
    if (std::string e = run(after, b); !e.empty()) return e;
    Buffers outputs_a, outputs_b;
    for (const kir::BufferArg &arg : before.buffers) {
        if (!arg.is_output) continue;
        outputs_a[arg.name] = a.at(arg.name);
        outputs_b[arg.name] = b.at(arg.name);
    }
    return compare_outputs(outputs_a, outputs_b, 0.0);
}

/// The kernel IR's text, for failure messages.
inline std::string text(const Halide::Internal::Stmt &s) {
    std::ostringstream out;
    out << s;
    return out.str();
}

}  // namespace pulse::test

/// The pass's result is the expected IR, node for node (both printed on failure).
#define REQUIRE_SAME_IR(actual, expected)                                                      \
    do {                                                                                       \
        INFO("actual:\n" << pulse::test::text(actual) << "expected:\n" << pulse::test::text(expected)); \
        REQUIRE(Halide::Internal::equal((actual), (expected)));                                \
    } while (0)

#endif
