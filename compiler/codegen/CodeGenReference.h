// Emits the reference order of a URE program as plain C++: the oracle that
// generated kernels are checked against where Halide and isl are not available
// (a GPU machine), and in CI against the interpreter itself.
#ifndef PULSE_CODEGEN_REFERENCE_H
#define PULSE_CODEGEN_REFERENCE_H

#include <string>
#include <vector>

#include "ir/Affine.h"
#include "ir/UreProgram.h"

namespace pulse {

/// C++ source defining
///   void NAME_reference(const T *in_0, ..., T *out_0, ..., int64_t instances);
/// and the layout functions (emit_layout_functions).
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

/// One buffer of the layout: an input (in input order) or an output (in merge
/// order), with the affine indices that span each dimension.
struct LayoutBuffer {
    std::string name;
    Halide::Type type;
    bool is_output;
    /// An index and the iterations of each loop it is not evaluated at
    /// (InputAccess::excluded; none for an output's write).
    struct Reach {
        AffineForm form;
        std::vector<std::pair<int64_t, int64_t>> excluded;
    };
    std::vector<std::vector<Reach>> dims;  ///< per dimension: the reads (or the write) that span it
    std::vector<ir::Loop> loops;                ///< the loops the write spans (an output; UreProgram::output_loops)
    /// [min, max] of dimension `dim` with `instances` array instances.
    std::pair<int64_t, int64_t> range(const ir::UreProgram &program, size_t dim, int64_t instances) const;
};
std::vector<LayoutBuffer> layout_buffers(const ir::UreProgram &program, const std::vector<std::string> &input_order);

/// The layout functions, C as well as C++, named by buffer:
///   int64_t NAME_default_instances(void);   // the extent the spec gave
///   void NAME_BUFFER_region(int dim, int64_t instances, int64_t *min, int64_t *extent);
///   int64_t NAME_BUFFER_elements(int64_t instances);
/// for every input and output, guarded so that several generated files
/// defining them can be included together. `qualifier` prefixes each function
/// (e.g. "static inline"). Kernels index inputs and outputs with this layout.
std::string emit_layout_functions(const ir::UreProgram &program, const std::string &name,
                                  const std::vector<std::string> &input_order, const std::string &qualifier);

/// Plain words on the buffers of a generated kernel, for the comment of its
/// host header: each buffer's role, type, element count and index range at the
/// spec's sizes (NAME_default_instances), one line each, and how to size them
/// for another number of instances.
std::string describe_buffers(const ir::UreProgram &program, const std::string &name,
                             const std::vector<std::string> &input_order);

/// The offset of element `index` (printed coordinates, first dimension
/// innermost) in a dense box whose minima and extents are the variables
/// BUFFER_min0, BUFFER_extent0, ...: `(i0 - BUFFER_min0) + (i1 - BUFFER_min1) *
/// BUFFER_extent0 + ...`, each coordinate prefixed by `cast` (e.g. "(int64_t)").
std::string dense_offset_text(const std::string &buffer, const std::vector<std::string> &index, const std::string &cast = "");

}  // namespace pulse

#endif
