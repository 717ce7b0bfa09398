// The CUDA backend: prints a SystolicProgram as a CUDA kernel in which each
// warp runs one array instance and each lane is one PE (DESIGN.md §4).
//
// Mapping:
//   - warp w of the grid runs instance w (the instance loops flattened,
//     innermost fastest); the outermost instance loop's extent is the run-time
//     argument `instances`, so one kernel serves a small check and a batch
//     that fills the GPU;
//   - lane l is PE p = pe_min + l; lanes l >= pe_count are idle but execute
//     every shuffle (shuffles are never inside divergent code);
//   - a variable's history (its values at t-1 .. t-history) is a chain of
//     scalar registers shifted once per step, never an array, so nothing can
//     spill to local memory through a run-time index;
//   - a tap (V, dp, dt >= 1) is __shfl_up_sync (dp > 0) / __shfl_down_sync
//     (dp < 0) of V's history register dt, issued by all lanes at the top of
//     the step; a same-step copy chain (dt = 0, dp != 0) is resolved with one
//     ballot and one shuffle from the chain's source lane.
#ifndef PULSE_CODEGEN_CUDA_H
#define PULSE_CODEGEN_CUDA_H

#include <string>
#include <vector>

#include "SystolicProgram.h"

namespace pulse {

/// The text of the generated files for one kernel.
struct CudaSources {
    std::string header;   ///< NAME.h: host API (launch function, buffer layout)
    std::string kernel;   ///< NAME.cu: the kernel and the launch function
    std::string check;    ///< NAME_check.cu: the standalone GPU-vs-reference harness
};

/// Warps per thread block of the generated kernels.
constexpr int cuda_warps_per_block = 8;

/// Generates the sources of kernel `name` for `program`; inputs are passed in
/// `input_order` (the spec's order). Throws CompileError if the array does not
/// fit a warp (more than 32 PEs), naming the bounds that would fit.
CudaSources generate_cuda(const sys::SystolicProgram &program, const std::string &name,
                          const std::vector<std::string> &input_order);

/// Writes NAME.cu and NAME.h into `directory` (created if missing).
/// NAME.h declares
///   void NAME(const T *in..., T *out..., int64_t instances, cudaStream_t stream);
/// which launches the kernel on device pointers, plus the buffer layout
/// (NAME_cuda_input_region, NAME_cuda_output_extent, NAME_cuda_default_instances).
void emit_cuda(const sys::SystolicProgram &program, const std::string &name,
               const std::vector<std::string> &input_order, const std::string &directory);

/// Writes NAME_check.cu into `directory`: a standalone program that runs the
/// kernel on random inputs with a GPU-filling batch and compares every output
/// with NAME_reference.h (emit_reference_cpp); `--bench` also times it.
void emit_cuda_check(const sys::SystolicProgram &program, const std::string &name,
                     const std::vector<std::string> &input_order, const std::string &directory);

}  // namespace pulse

#endif
