// The CM backend: prints the kernel IR (KernelIR.h) as an Intel C for Metal
// kernel, the way CodeGenCudaKernel.h prints it as CUDA: one hardware thread
// runs what one warp runs, lane l of every `vector<T, W>` is lane l of the
// warp. It plans nothing of its own: the mapping is lower_to_kernel's and the
// kernel passes' (KernelPasses.h). With the kernel come host code that runs it
// through Level Zero, and a harness that runs it on Pulse's CPU emulation of
// CM (runtime/cm_emu/cm/cm.h).
#ifndef PULSE_CODEGEN_CM_H
#define PULSE_CODEGEN_CM_H

#include <string>
#include <vector>

#include "codegen/CmRegisters.h"
#include "ir/KernelIR.h"
#include "ir/SystolicProgram.h"
#include "lower/LowerToKernel.h"

namespace pulse {

/// The kernel IR the CM backend prints: lower_to_kernel, then the kernel
/// passes without constant memory (KernelPassOptions::constant_memory: CM
/// has no constant bank the host fills, so lane-uniform inputs stay surface
/// reads) and without register windows (KernelPassOptions::register_window:
/// a thread's GRF holds an eighth of what a warp's registers hold).
kir::Kernel lower_for_cm(const sys::SystolicProgram &program, const std::string &name,
                         const std::vector<std::string> &input_order, const KernelOptions &options = {});

/// plan_cm_registers (CmRegisters.h) of the kernel lower_for_cm makes of
/// `program` (default options).
CmRegisterPlan plan_cm_registers(const sys::SystolicProgram &program, const CmTarget &target);

/// NAME_genx.cpp for `kernel` (from lower_for_cm). Throws CompileError if
/// the kernel does not fit the target's GRF (naming the fix) or uses
/// something the CM backend cannot print (buffers of other than 32-bit
/// elements, constant memory).
std::string print_cm_kernel(const kir::Kernel &kernel, const CmTarget &target);

/// The kernel source, NAME_genx.cpp, of `program` (lower_for_cm, then print_cm_kernel).
std::string emit_cm_kernel(const sys::SystolicProgram &program, const std::string &name,
                           const std::vector<std::string> &input_order, const CmTarget &target,
                           const KernelOptions &options = {});

/// The host program, NAME_host.cpp, of `kernel`: runs it through Level Zero
/// on random inputs and checks it against the emitted reference.
std::string print_cm_host(const kir::Kernel &kernel);

/// The CPU harness, NAME_emu.cpp, of `kernel`: the kernel on the CM
/// emulation, the emitted reference, random non-zero inputs, NaN-poisoned
/// outputs; prints PASS or the first mismatch. Takes the instance count and
/// a seed on its command line.
std::string print_cm_emulation_harness(const kir::Kernel &kernel);

/// Writes NAME_genx.cpp, NAME_host.cpp and NAME_reference.h into `directory`
/// (created if missing).
void emit_cm(const sys::SystolicProgram &program, const std::string &name, const std::vector<std::string> &input_order,
             const std::string &directory, const CmTarget &target, const KernelOptions &options = {});

/// emit_cm, plus NAME_emu.cpp and the CM emulation it includes
/// (write_cm_emulation_header), so the directory builds on its own.
void emit_cm_emulation(const sys::SystolicProgram &program, const std::string &name,
                       const std::vector<std::string> &input_order, const std::string &directory, const CmTarget &target,
                       const KernelOptions &options = {});

/// The host C++ compiler: $CXX if set, else c++.
std::string host_cxx_compiler();

/// Writes Pulse's CPU emulation of CM (runtime/cm_emu/cm/cm.h, carried in the
/// library) as DIRECTORY/cm_emu/cm/cm.h; returns DIRECTORY/cm_emu, the
/// directory to add to the include path.
std::string write_cm_emulation_header(const std::string &directory);

/// The command that compiles `source` into `binary` against the CM emulation
/// in the cm_emu folder beside `source` (write_cm_emulation_header).
std::string cm_emulation_compile_command(const std::string &source, const std::string &binary);

/// Runs a shell command; returns its exit status and fills `output` with its
/// standard output and error.
int run_command(const std::string &command, std::string *output);

}  // namespace pulse

#endif
