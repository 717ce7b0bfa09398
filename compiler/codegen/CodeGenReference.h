// Emits the reference order of a URE program as plain C++: the oracle that
// generated kernels are checked against where Halide and isl are not available
// (a GPU machine), and in CI against the interpreter itself.
#ifndef PULSE_CODEGEN_REFERENCE_H
#define PULSE_CODEGEN_REFERENCE_H

#include <string>
#include <vector>

#include "ir/UreProgram.h"

namespace pulse {

/// C++ source defining
///   void NAME_reference(const T *in_0, ..., T *out_0, ..., int64_t instances);
///   // region of input `input` (input_order index) in dimension `dim`:
///   void NAME_input_region(int input, int dim, int64_t instances, int64_t *min, int64_t *extent);
///   // region of output `output` (merge order) in dimension `dim`, and its extent:
///   void NAME_output_region(int output, int dim, int64_t instances, int64_t *min, int64_t *extent);
///   int64_t NAME_output_extent(int output, int dim, int64_t instances);
///   int64_t NAME_default_instances();   // the extent the spec gave
/// Inputs are dense arrays (first dimension innermost) covering the regions of
/// infer_input_regions, element (i0, i1, ..) at ((i1 - min1) * extent0 + (i0 - min0));
/// outputs likewise over the box their index spans (ir::Ure::output_index():
/// `Out(c, b)` spans the loops' bounds of c and b, `Out(b * C + c)` the range
/// of b * C + c over them). Inputs come in
/// `input_order`, outputs in merge order. `instances` replaces the extent of
/// the outermost loop that the transform does not map (the array instances),
/// so the same code checks a small or a GPU-filling batch; the input regions
/// grow with it. The emitted code runs one instance at a time (no dependence
/// crosses instances, which the validator proves), so its storage is one
/// instance's domain.
std::string emit_reference_cpp(const ir::UreProgram &program, const std::string &name,
                               const std::vector<std::string> &input_order);

/// The loop whose extent becomes the run-time `instances`: the outermost loop
/// that the transform does not map (the outermost loop if there is no
/// transform); -1 if the transform maps every loop (then instances must be 1).
int instances_loop(const ir::UreProgram &program);

/// Just the layout functions (NAME_input_region, NAME_output_region,
/// NAME_output_extent, NAME_default_instances), guarded so that several
/// generated files defining them can be included together. `qualifier` prefixes each function (e.g.
/// "static inline" or "__host__ __device__ inline"). Kernels index inputs and
/// outputs with the same layout.
std::string emit_layout_functions(const ir::UreProgram &program, const std::string &name,
                                  const std::vector<std::string> &input_order, const std::string &qualifier);

/// The offset of element `index` (printed coordinates, first dimension
/// innermost) in a dense box whose minima and extents are the variables
/// BUFFER_min0, BUFFER_extent0, ...: `(i0 - BUFFER_min0) + (i1 - BUFFER_min1) *
/// BUFFER_extent0 + ...`, each coordinate prefixed by `cast` (e.g. "(int64_t)").
std::string dense_offset_text(const std::string &buffer, const std::vector<std::string> &index, const std::string &cast = "");

}  // namespace pulse

#endif
