// The CUDA printer of the kernel IR (KernelIR.h): every decision is already
// in the IR, so this file only prints. A warp runs Kernel::body; lanes are
// threads of the warp, lane exchanges are __shfl_*_sync over the full warp,
// constant-memory inputs are __constant__ arrays filled by the host function
// before the launch, buffers are pulse_buffer descriptors (runtime/pulse_buffer.h).
#ifndef PULSE_CODEGEN_CUDA_KERNEL_H
#define PULSE_CODEGEN_CUDA_KERNEL_H

#include <string>
#include <vector>

#include "codegen/GeneratedFile.h"
#include "ir/KernelIR.h"
#include "ir/UreProgram.h"

namespace pulse {

struct CudaKernelSources {
    /// NAME.h: extern "C" cudaError_t NAME(pulse_buffer in..., pulse_buffer out..., cudaStream_t),
    /// with HostHeaderText's statement and size queries
    std::string header;
    std::string kernel;  ///< NAME.cu: the kernel and its host function
    /// NAME_check.cu: runs the kernel on random inputs against NAME_reference.h
    /// (emit_reference_cpp) at the spec's sizes and with every output extent
    /// one smaller (tails), NaN-poisoned first; the outside of a cropped
    /// output must stay untouched. `--bench` also times it.
    std::string check;
};

/// What NAME.h says beyond the kernel IR: what the kernel computes in plain
/// words, and the size of its buffers.
struct HostHeaderText {
    std::string purpose;  ///< e.g. the spec's description: "1-D convolution, SBM: ..."
    std::string buffers;  ///< describe_buffers: each buffer's role, type and size
    std::string layout;   ///< emit_layout_functions: the size queries, named by buffer
};

/// The text for the kernel `name` of `program` (inputs in `input_order`):
/// `purpose`, describe_buffers and emit_layout_functions.
HostHeaderText host_header_text(const ir::UreProgram &program, const std::string &name,
                                const std::vector<std::string> &input_order, const std::string &purpose);

CudaKernelSources print_cuda(const kir::Kernel &kernel, const HostHeaderText &text = {});

/// The files of the CUDA backend for `kernel`, the finished kernel IR of a
/// CUDA target, from `source` (inputs in `input_order`; `purpose` as in
/// host_header_text): NAME.h, NAME.cu, NAME_check.cu and NAME_reference.h.
std::vector<GeneratedFile> print_cuda_files(const kir::Kernel &kernel, const ir::UreProgram &source,
                                            const std::vector<std::string> &input_order, const std::string &purpose);

}  // namespace pulse

#endif
