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

/// An Int(32) constant.
inline Halide::Expr i32(int64_t v) { return Halide::Internal::make_const(Halide::Int(32), v); }

/// An Int(32) variable (or one of type `t`).
inline Halide::Expr var(const std::string &name, Halide::Type t = Halide::Int(32)) {
    return Halide::Internal::Variable::make(t, name);
}

/// A load of `buffer` at `coords` under its bounds guard (the kernel IR's convention).
inline Halide::Expr guarded_load(const kir::Kernel &k, const std::string &buffer, const std::vector<Halide::Expr> &coords) {
    const kir::BufferArg &b = k.buffer(buffer);
    return kir::load(b.type, buffer, kir::in_bounds(b, coords), coords);
}

/// A store to `buffer` at `coords` under its bounds guard.
inline Halide::Internal::Stmt guarded_store(const kir::Kernel &k, const std::string &buffer, const Halide::Expr &value,
                                            const std::vector<Halide::Expr> &coords) {
    return kir::store(buffer, kir::in_bounds(k.buffer(buffer), coords), value, coords);
}

/// The bounds guard of element `coords` of `buffer`, spelled out (not
/// simplified), so that a pass's substitution into it and the expected IR
/// build the same nodes.
inline Halide::Expr spelled_guard(const std::string &buffer, const std::vector<Halide::Expr> &coords) {
    Halide::Expr inside;
    for (size_t d = 0; d < coords.size(); d++) {
        Halide::Expr c = coords[d].type() == Halide::Int(64) ? coords[d] : Halide::Internal::Cast::make(Halide::Int(64), coords[d]);
        Halide::Expr t = kir::buffer_min(buffer, (int)d) <= c && c < kir::buffer_min(buffer, (int)d) + kir::buffer_extent(buffer, (int)d);
        inside = inside.defined() ? inside && t : t;
    }
    return inside;
}

/// `body` as one array instance (KernelIR.h's marker).
inline Halide::Internal::Stmt instance(const Halide::Internal::Stmt &body) {
    return Halide::Internal::ProducerConsumer::make_produce(kir::array_instance_marker, body);
}

/// A kernel named `name` of `warps` warps per array over 1-D buffers: a grid
/// loop `b` over the instances needed to cover Out (warps * 32 elements
/// each), bound by `let b = int32(warp.index)` around the instance marker.
inline kir::Kernel kernel_over_warps(const std::string &name, int warps, std::vector<kir::BufferArg> buffers,
                                     const Halide::Internal::Stmt &body) {
    kir::Kernel k;
    k.name = name;
    k.buffers = std::move(buffers);
    const int threads = warps * kir::warp_size;
    k.grid.push_back({"b", 0, (kir::buffer_extent("Out", 0) + (threads - 1)) / threads});
    k.warps_per_array = warps;
    k.pe_count = threads;
    k.body = Halide::Internal::LetStmt::make("b", Halide::Internal::Cast::make(Halide::Int(32), kir::warp_index()), instance(body));
    return k;
}

/// for (v, min, extent) body, a serial loop unless `type` says otherwise.
inline Halide::Internal::Stmt serial(const std::string &v, int min, int extent, const Halide::Internal::Stmt &body,
                                     Halide::Internal::ForType type = Halide::Internal::ForType::Serial) {
    return Halide::Internal::For::make(v, Halide::Internal::make_const(Halide::Int(32), min),
                                       Halide::Internal::make_const(Halide::Int(32), extent), type, Halide::DeviceAPI::None, body);
}

/// Lets name = value around `body`, in order.
inline Halide::Internal::Stmt lets(const std::vector<std::pair<std::string, Halide::Expr>> &bindings,
                                   const Halide::Internal::Stmt &body) {
    Halide::Internal::Stmt s = body;
    for (size_t i = bindings.size(); i-- > 0;) s = Halide::Internal::LetStmt::make(bindings[i].first, bindings[i].second, s);
    return s;
}

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
