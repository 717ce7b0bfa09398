#include "CroppedRun.h"

#include <cstring>

#include <cmath>
#include <map>

#include "exec/KernelExecutor.h"
#include "exec/Simulator.h"

namespace pulse::test {

namespace {

/// A window of `b`'s storage, cropped in dimension d (a new shape; Halide::Buffer
/// copies share theirs).
Halide::Buffer<> window(const Halide::Buffer<> &b, int d, int min, int extent) {
    return Halide::Buffer<>(b.get()->cropped(d, min, extent));
}

/// Whether every element of `part` still holds the poison (NaN for floats, the
/// poison pattern for integers).
bool still_poisoned(const Halide::Buffer<> &part) {
    if (part.type().is_float()) {
        bool all_nan = true;
        if (part.type().bits() == 64) {
            Halide::Buffer<double> typed(*part.raw_buffer());
            typed.for_each_value([&](double v) { all_nan &= std::isnan(v); });
        } else {
            Halide::Buffer<float> typed(*part.raw_buffer());
            typed.for_each_value([&](float v) { all_nan &= std::isnan(v); });
        }
        return all_nan;
    }
    // Byte by byte: a bool's poison byte and a written true read alike as values.
    Halide::Buffer<> poisoned = part.copy(), dense = part.copy();
    poison(poisoned);
    return std::memcmp(poisoned.data(), dense.data(), dense.size_in_bytes()) == 0;
}

}  // namespace

std::string run_cropped_against_reference(const kir::Kernel &kernel, const Buffers &inputs, const Buffers &expected, int crop) {
    Buffers actual = inputs;
    std::map<std::string, Halide::Buffer<>> storage;
    for (const auto &[name, buffer] : expected) {
        Halide::Buffer<> out = buffer.copy();
        poison(out);
        Halide::Buffer<> view = out;
        for (int d = 0; d < view.dimensions(); d++) {
            if (view.dim(d).extent() > crop) view = window(view, d, view.dim(d).min(), view.dim(d).extent() - crop);
        }
        actual[name] = view;
        storage[name] = out;
    }
    try {
        execute_kernel(kernel, actual);
    } catch (const EvaluationError &e) {
        return e.what();
    }
    for (const auto &[name, buffer] : expected) {
        const Halide::Buffer<> &view = actual.at(name);
        for (int d = 0; d < buffer.dimensions(); d++) {
            if (view.dim(d).extent() == buffer.dim(d).extent()) continue;
            Halide::Buffer<> outside = window(storage.at(name), d, view.dim(d).max() + 1, buffer.dim(d).max() - view.dim(d).max());
            if (!still_poisoned(outside)) return "output " + name + " written outside its cropped extent";
        }
        Halide::Buffer<> inside = buffer;
        for (int d = 0; d < inside.dimensions(); d++) inside = window(inside, d, view.dim(d).min(), view.dim(d).extent());
        std::string mismatch = compare_outputs(Buffers{{name, inside.copy()}}, Buffers{{name, view.copy()}});
        if (!mismatch.empty()) return "cropped by " + std::to_string(crop) + ": " + mismatch;
    }
    return "";
}

}  // namespace pulse::test
