#include "IntelCompile.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "Emit.h"

// runtime/cm_vc/cm/cm.h as text (cmake/EmbedFile.cmake).
extern const char *const pulse_cm_vc_header_text;

namespace pulse {

namespace fs = std::filesystem;

namespace {

std::string quote(const std::string &s) { return "'" + s + "'"; }

bool on_path(const std::string &program) {
    std::string ignored;
    return run_command("command -v " + program + " > /dev/null 2>&1", &ignored) == 0;
}

/// The opt-14 plugin of tools/vc: $PULSE_VC_PLUGIN, else the installed one,
/// else the one in the build tree; "" if none exists.
std::string vc_plugin() {
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("PULSE_VC_PLUGIN")) candidates.push_back(env);
#ifdef PULSE_VC_PLUGIN_INSTALLED
    candidates.push_back(PULSE_VC_PLUGIN_INSTALLED);
#endif
#ifdef PULSE_VC_PLUGIN_BUILT
    candidates.push_back(PULSE_VC_PLUGIN_BUILT);
#endif
    for (const std::string &c : candidates) {
        std::error_code error;
        if (!c.empty() && fs::exists(c, error)) return c;
    }
    return "";
}

/// Runs one step; on failure fills `build.log` with the command and its output.
bool step(const std::string &command, IntelBuild &build) {
    std::string output;
    if (run_command(command + " 2>&1", &output) == 0) return true;
    build.log = "$ " + command + "\n" + output;
    return false;
}

/// What one `.asm` file of IGC's ISA dump says of the kernel it holds.
struct IsaFigures {
    std::string kernel;
    int grf_registers = 0, grf_touched = 0, spill_bytes = 0, instructions = 0;
};

IsaFigures read_isa(const fs::path &path) {
    static const std::regex kernel_name(R"(^//\.kernel (\S+))"), num_grf(R"(numGRF=(\d+))"), inst_count(R"(^//\.instCount (\d+))"),
        spill(R"(^//\.spill size (\d+))"), reg(R"(\br(\d+)\.\d+)");
    IsaFigures f;
    std::ifstream in(path);
    std::string line;
    std::set<int> registers;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_search(line, m, kernel_name)) f.kernel = m[1];
        if (std::regex_search(line, m, num_grf)) f.grf_registers = std::stoi(m[1]);
        if (std::regex_search(line, m, inst_count)) f.instructions = std::stoi(m[1]);
        if (std::regex_search(line, m, spill)) f.spill_bytes = std::stoi(m[1]);
        if (line.rfind("//", 0) == 0 || line.find_first_not_of(" \t") == std::string::npos) continue;
        const std::string code = line.substr(0, line.find("//"));
        for (auto it = std::sregex_iterator(code.begin(), code.end(), reg); it != std::sregex_iterator(); ++it) {
            registers.insert(std::stoi((*it)[1]));
        }
    }
    f.grf_touched = (int)registers.size();
    return f;
}

/// Reads IGC's ISA dump in `dump`: each compiled kernel's `.asm` file (vISA
/// assembly is `.visaasm`) gives numGRF, `//.instCount N` and, if registers
/// spilled, `//.spill size N`. IGC may compile a kernel twice (a retry with
/// other settings after a spill) and keeps the better attempt: per kernel,
/// the attempt with the least spill. Several kernels: the largest figures.
void read_isa_dump(const std::string &dump, IntelBuild &build) {
    std::map<std::string, IsaFigures> kernels;
    std::error_code error;
    for (const fs::directory_entry &e : fs::directory_iterator(dump, error)) {
        if (e.path().extension() != ".asm") continue;
        IsaFigures f = read_isa(e.path());
        auto it = kernels.find(f.kernel);
        if (it == kernels.end() || f.spill_bytes < it->second.spill_bytes ||
            (f.spill_bytes == it->second.spill_bytes && f.instructions < it->second.instructions)) {
            kernels[f.kernel] = f;
        }
    }
    build.kernels = (int)kernels.size();
    for (const auto &[name, f] : kernels) {
        build.grf_registers = std::max(build.grf_registers, f.grf_registers);
        build.grf_touched = std::max(build.grf_touched, f.grf_touched);
        build.spill_bytes = std::max(build.spill_bytes, f.spill_bytes);
        build.instructions = std::max(build.instructions, f.instructions);
    }
}

/// ocloc for one device, with IGC's ISA dump in DEVICE.dump beside the binary.
IntelBuild run_ocloc(const std::string &input_flags, const std::string &options, const std::string &stem, const std::string &device) {
    IntelBuild build;
    build.device = device;
    build.binary = stem + "_" + device + ".bin";
    const std::string dump = stem + "_" + device + ".dump";
    std::error_code error;
    fs::remove_all(dump, error);
    fs::create_directories(dump, error);
    const fs::path binary(build.binary);
    const std::string command = "IGC_ShaderDumpEnable=1 IGC_DumpToCustomDir=" + quote(fs::absolute(dump).string()) + " ocloc compile " +
                                input_flags + " -device " + device + (options.empty() ? "" : " -options " + quote(options)) +
                                " -output " + quote(binary.filename().string()) + " -output_no_suffix -out_dir " +
                                quote(binary.parent_path().empty() ? "." : binary.parent_path().string());
    if (!step(command, build)) return build;
    read_isa_dump(dump, build);
    if (build.kernels == 0) {
        build.log = "$ " + command + "\nocloc reported success but compiled no kernel (no ISA in " + dump + ")";
        return build;
    }
    build.compiled = true;
    return build;
}

}  // namespace

const std::vector<std::string> &intel_devices() {
    static const std::vector<std::string> devices = {"kbl", "tgllp", "dg2", "pvc"};
    return devices;
}

std::string IntelBuild::summary() const {
    std::ostringstream s;
    s << device << ": ";
    if (!compiled) return s.str() + "FAILED";
    s << kernels << (kernels == 1 ? " kernel, " : " kernels, ") << grf_touched << " of " << grf_registers << " GRF, " << spill_bytes
      << " spill bytes, " << instructions << " instructions";
    return s.str();
}

std::string missing_intel_tools(bool cm) {
    std::vector<std::string> programs = {"ocloc"};
    if (cm) programs.insert(programs.end(), {"clang++-14", "opt-14", "llvm-spirv-14"});
    std::string missing;
    for (const std::string &p : programs) {
        if (!on_path(p)) missing += (missing.empty() ? "" : ", ") + p;
    }
    if (cm && vc_plugin().empty()) {
        missing += std::string(missing.empty() ? "" : ", ") +
                   "the PulseGenX opt plugin (built with Pulse when intel-vc-intrinsics-dev is installed; or set PULSE_VC_PLUGIN)";
    }
    if (missing.empty()) return "";
    return "missing " + missing +
           "; install Debian's intel-opencl-icd libigc-tools llvm-spirv-14 intel-vc-intrinsics-dev clang-14 llvm-14 "
           "(scripts/setup.sh does) and rebuild Pulse";
}

std::vector<IntelBuild> compile_cm_for_intel(const std::string &source, const std::vector<std::string> &devices) {
    const fs::path path(source);
    const std::string directory = path.parent_path().empty() ? "." : path.parent_path().string();
    const std::string stem = (path.parent_path() / path.stem()).string();
    write_files(directory, {{"cm_vc/cm/cm.h", pulse_cm_vc_header_text}});
    // The steps before the device: once for every device.
    IntelBuild common;
    const std::string bitcode = stem + ".bc", genx = stem + ".genx.bc", spirv = stem + ".spv";
    // -ffreestanding: clang's own <stdint.h>; no C++ library on spir64.
    const bool front = step("clang++-14 -std=c++17 -target spir64-unknown-unknown -O2 -ffreestanding -nostdinc++ -fno-exceptions "
                            "-fno-rtti -Wno-unknown-attributes -I " + quote(directory + "/cm_vc") + " -emit-llvm -c " + quote(source) +
                                " -o " + quote(bitcode),
                            common) &&
                       step("opt-14 -load-pass-plugin=" + quote(vc_plugin()) +
                                    " -passes='pulse-genx-lower,function(sroa,early-cse,instcombine,simplifycfg),pulse-genx-kernels,"
                                    "GenXSPIRVWriterAdaptor' " +
                                quote(bitcode) + " -o " + quote(genx),
                            common) &&
                       step("llvm-spirv-14 --spirv-allow-unknown-intrinsics=llvm.genx. "
                            "--spirv-ext=+SPV_INTEL_vector_compute,+SPV_KHR_float_controls,+SPV_INTEL_float_controls2 " +
                                quote(genx) + " -o " + quote(spirv),
                            common);
    std::vector<IntelBuild> builds;
    for (const std::string &device : devices) {
        if (!front) {
            IntelBuild b = common;
            b.device = device;
            builds.push_back(b);
            continue;
        }
        builds.push_back(run_ocloc("-spirv_input -file " + quote(spirv), "-vc-codegen", stem, device));
    }
    return builds;
}

std::vector<IntelBuild> compile_opencl_for_intel(const std::string &source, const std::vector<std::string> &devices) {
    const fs::path path(source);
    const std::string stem = (path.parent_path() / path.stem()).string();
    std::vector<IntelBuild> builds;
    for (const std::string &device : devices) {
        // pvc's sub-groups have 16 or 32 lanes, not 8 (CodeGenOpenCL.h).
        const std::string options = "-cl-std=CL2.0" + std::string(device == "pvc" ? " -DPULSE_MIN_SUB_GROUP_SIZE=16" : "");
        builds.push_back(run_ocloc("-file " + quote(source), options, stem, device));
    }
    return builds;
}

}  // namespace pulse
