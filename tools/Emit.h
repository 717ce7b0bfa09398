// Writing what the printers generate, and building and running it on this
// machine: the file writer, the process runner, and the CM emulation's build
// command. The printers (compiler/codegen) return files as values; only this
// layer touches the file system or starts processes.
#ifndef PULSE_TOOLS_EMIT_H
#define PULSE_TOOLS_EMIT_H

#include <string>
#include <vector>

#include "codegen/GeneratedFile.h"
#include "ir/SystolicProgram.h"
#include "ir/Target.h"
#include "lower/LowerToKernel.h"

namespace pulse {

/// Writes each file under `directory` (created, with the files' subfolders,
/// if missing). Throws CompileError naming a file that cannot be written.
void write_files(const std::string &directory, const std::vector<GeneratedFile> &files);

/// The CM backend's files for `program` (lower_to_target for `target`, then
/// print_cm), written into `directory`; with `emulation` also NAME_emu.cpp
/// and the CM emulation it includes, so the directory builds on its own.
void emit_cm(const sys::SystolicProgram &program, const std::string &name, const std::vector<std::string> &input_order,
             const std::string &directory, const Target &target, const KernelOptions &options = {}, bool emulation = false);

/// emit_cm with the emulation harness.
void emit_cm_emulation(const sys::SystolicProgram &program, const std::string &name,
                       const std::vector<std::string> &input_order, const std::string &directory, const Target &target,
                       const KernelOptions &options = {});

/// Writes Pulse's CPU emulation of CM as DIRECTORY/cm_emu/cm/cm.h; returns
/// DIRECTORY/cm_emu, the directory to add to the include path.
std::string write_cm_emulation_header(const std::string &directory);

/// The host C++ compiler: $CXX if set, else c++.
std::string host_cxx_compiler();

/// The command that compiles `source` into `binary` against the CM emulation
/// in the cm_emu folder beside `source` (write_cm_emulation_header).
std::string cm_emulation_compile_command(const std::string &source, const std::string &binary);

/// Runs a shell command; returns its exit status and fills `output` with its
/// standard output and error.
int run_command(const std::string &command, std::string *output);

}  // namespace pulse

#endif
