#include "Emit.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

#include "codegen/CodeGenCM.h"
#include "lower/Pipeline.h"

namespace pulse {

void write_files(const std::string &directory, const std::vector<GeneratedFile> &files) {
    for (const GeneratedFile &file : files) {
        const std::filesystem::path path = std::filesystem::path(directory) / file.name;
        std::error_code error;
        std::filesystem::create_directories(path.parent_path(), error);
        if (error) compile_error("cannot create directory ", path.parent_path().string(), ": ", error.message());
        std::ofstream f(path);
        f << file.text;
        if (!f) compile_error("cannot write ", path.string());
    }
}

void emit_cm(const sys::SystolicProgram &program, const std::string &name, const std::vector<std::string> &input_order,
             const std::string &directory, const Target &target, const KernelOptions &options, bool emulation) {
    kir::Kernel kernel = lower_to_target(program, name, input_order, options, target);
    write_files(directory, print_cm(kernel, target, program.source, input_order, emulation));
}

void emit_cm_emulation(const sys::SystolicProgram &program, const std::string &name,
                       const std::vector<std::string> &input_order, const std::string &directory, const Target &target,
                       const KernelOptions &options) {
    emit_cm(program, name, input_order, directory, target, options, true);
}

std::string write_cm_emulation_header(const std::string &directory) {
    write_files(directory, {cm_emulation_header()});
    return directory + "/cm_emu";
}

std::string host_cxx_compiler() {
    const char *cxx = std::getenv("CXX");
    if (cxx && *cxx) return cxx;
    return "c++";
}

std::string cm_emulation_compile_command(const std::string &source, const std::string &binary) {
    // -O1: the emulation's element loops need some optimisation to run fast,
    // and -O2 costs more compile time than it saves here.
    const std::string include_dir = (std::filesystem::path(source).parent_path() / "cm_emu").string();
    // -fwrapv: the GPU's integer arithmetic wraps, and so does the language's.
    return host_cxx_compiler() + " -std=c++17 -O1 -fwrapv -Wno-attributes -I '" + include_dir + "' '" + source + "' -o '" + binary +
           "' 2>&1";
}

int run_command(const std::string &command, std::string *output) {
    FILE *pipe = popen(command.c_str(), "r");
    if (!pipe) compile_error("cannot run: ", command);
    std::array<char, 4096> buffer;
    std::string text;
    size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) text.append(buffer.data(), n);
    int status = pclose(pipe);
    if (output) *output = text;
    if (status == -1) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace pulse
