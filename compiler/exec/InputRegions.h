// Pass: infer the region of each input that the bounded domain reads.
#ifndef PULSE_INPUT_REGIONS_H
#define PULSE_INPUT_REGIONS_H

#include "ir/UreProgram.h"
#include "ir/Scalar.h"

namespace pulse {

/// [min, max] of one dimension of an input.
struct IndexRange {
    int64_t min = 0, max = -1;
    int64_t extent() const { return max - min + 1; }
};

/// For each input, per dimension, the range of indices its affine reads take
/// over the box each read is evaluated in (InputAccess::reach: the loop bounds
/// less the iterations its selects exclude).
std::map<std::string, std::vector<IndexRange>> infer_input_regions(const ir::UreProgram &program);

/// Most points of a loop nest the CPU tools (interpreter, simulator, kernel
/// executor) enumerate, and most bytes of buffers they allocate.
constexpr int64_t max_enumerated_points = int64_t(1) << 31;
constexpr int64_t max_enumerated_bytes = int64_t(8) << 30;

/// Refuses, before any work, a program whose domain or buffers the CPU tools
/// cannot enumerate: more than max_enumerated_points points, more than
/// max_enumerated_bytes of input and output buffers, or a buffer extent past
/// 2^31 - 1. Throws EvaluationError naming the sizes and the fix; `action`
/// names what would have enumerated (e.g. "--realize").
void check_enumerable(const ir::UreProgram &program, const std::string &action);

/// Buffers of the input regions filled with random values (never zero):
/// floats uniform in [-1, 1] away from 0, integers in [-9, 9] \ {0}.
Buffers random_input_buffers(const ir::UreProgram &program, uint32_t seed);

/// Reads element `coords` of `buffer` exactly (bool, (u)int8/16/32/64,
/// float32, float64); the Scalar converts to double for callers that want one.
Scalar load_element(const Halide::Buffer<> &buffer, const std::vector<int> &coords);
/// The bytes of element `coords` of `buffer`.
const uint8_t *element_bytes(const Halide::Buffer<> &buffer, const std::vector<int> &coords);
/// Writes element `coords` of `buffer`: `value` (of any kind; a double
/// converts implicitly) becomes the element type as Scalar::normalize says
/// (integers wrap to the element's width, float32 rounds once).
void store_element(Halide::Buffer<> &buffer, const std::vector<int> &coords, Scalar value);

/// Fills `buffer` with values no kernel computes by accident: for floats a
/// NaN whose every byte is 0xff (arithmetic makes other NaNs, so a poisoned
/// element stays distinguishable from a computed NaN), 0x5A bytes for integers.
void poison(Halide::Buffer<> &buffer);
/// Whether element `coords` of `buffer` holds poison()'s bytes.
bool is_poison_element(const Halide::Buffer<> &buffer, const std::vector<int> &coords);

}  // namespace pulse

#endif
