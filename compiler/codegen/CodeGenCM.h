// The CM backend: prints the kernel IR (KernelIR.h) as an Intel C for Metal
// kernel, the way CodeGenCudaKernel.h prints it as CUDA: one hardware thread
// runs what one warp runs, lane l of every `vector<T, W>` is lane l of the
// warp. It plans nothing of its own: the mapping is lower_to_kernel's and the
// kernel passes' (lower_to_target for a CM Target). With the kernel come host
// code that runs it through Level Zero, and a harness that runs it on Pulse's
// CPU emulation of CM (runtime/cm_emu/cm/cm.h). Files are returned as values.
#ifndef PULSE_CODEGEN_CM_H
#define PULSE_CODEGEN_CM_H

#include <string>
#include <vector>

#include "ir/CmRegisters.h"
#include "codegen/GeneratedFile.h"
#include "ir/KernelIR.h"
#include "ir/Target.h"
#include "ir/UreProgram.h"

namespace pulse {

/// NAME_genx.cpp for `kernel`, the finished kernel IR of a CM target
/// (lower_to_target). Throws CompileError if the kernel does not fit the
/// target's GRF (naming the fix) or uses something the CM backend cannot
/// print (buffers of other than 32-bit elements, constant memory, an array
/// over several warps, inputs staged in shared memory).
std::string print_cm_kernel(const kir::Kernel &kernel, const Target &target);

/// The host program, NAME_host.cpp, of `kernel`: runs it through Level Zero
/// on random inputs and checks it against the emitted reference.
std::string print_cm_host(const kir::Kernel &kernel);

/// The CPU harness, NAME_emu.cpp, of `kernel`: the kernel on the CM
/// emulation, the emitted reference, random non-zero inputs, NaN-poisoned
/// outputs; prints PASS or the first mismatch. Takes the instance count and
/// a seed on its command line.
std::string print_cm_emulation_harness(const kir::Kernel &kernel);

/// Pulse's CPU emulation of CM (runtime/cm_emu/cm/cm.h, carried in the
/// library) as cm_emu/cm/cm.h: NAME_emu.cpp builds with -I cm_emu.
GeneratedFile cm_emulation_header();

/// The files of the CM backend for `kernel` (from `source`, whose reference
/// order is printed as NAME_reference.h): NAME_genx.cpp, NAME_reference.h,
/// NAME_host.cpp and, with `emulation`, NAME_emu.cpp and the emulation
/// header, so the folder builds on its own.
std::vector<GeneratedFile> print_cm(const kir::Kernel &kernel, const Target &target, const ir::UreProgram &source,
                                    const std::vector<std::string> &input_order, bool emulation);

}  // namespace pulse

#endif
