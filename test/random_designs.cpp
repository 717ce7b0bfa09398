// Writes accepted random linear designs as CUDA for a GPU run: the random URE
// systems and transforms of the differential fuzzer (RandomSystem.h), each
// validated, lowered to the kernel IR in one of the mappings the backends use
// (one warp, several PEs per lane, the warps of a block; the time loop
// unrolled or rolled), checked on the kernel executor here, and printed with
// its host header, C++ reference and check harness (NAME_check.cu: random
// inputs, outputs poisoned, run at the spec's sizes and with every output one
// smaller) into DIR/NAME/. scripts/gpu_random_designs.sh builds and runs
// them on a GPU.
//
// usage: random_designs COUNT DIR [SEED]
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "analysis/CheckWellDefined.h"
#include "analysis/Validate.h"
#include "codegen/CodeGenCudaKernel.h"
#include "codegen/CodeGenReference.h"
#include "exec/KernelExecutor.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "RandomSystem.h"

using namespace pulse;
using namespace pulse::test;

namespace {

void write_file(const std::filesystem::path &path, const std::string &text) {
    std::ofstream f(path);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 3) {
        std::cerr << "usage: " << argv[0] << " COUNT DIR [SEED]\n";
        return 2;
    }
    const int count = std::atoi(argv[1]);
    const std::filesystem::path dir = argv[2];
    uint32_t seed = argc > 3 ? (uint32_t)std::atoll(argv[3]) : 1;
    std::filesystem::create_directories(dir);
    int written = 0, drawn = 0, refused = 0, mismatches = 0, narrow = 0;
    int by_mapping[3][2] = {};  // one warp / several PEs per lane / warps of a block; unrolled / rolled
    std::ofstream list(dir / "designs.txt");
    for (; written < count && drawn < 2000 * count; seed++) {
        drawn++;
        std::mt19937 rng(seed);
        const System system = draw_system(rng);
        const Transform transform = draw_transform(rng, system, 1);
        ir::UreProgram program;
        sys::SystolicProgram systolic;
        try {
            program = build_system(system, transform);
            check_well_defined(program);
            validate_transform(program);
            systolic = compile_to_systolic(program);
        } catch (const CompileError &) {
            continue;  // refused before code: not a design
        }
        // Arrays wider than a warp are rarer: narrow ones fill at most 70 % of the count.
        const bool wide = systolic.pe_count > kir::warp_size;
        if (!wide && narrow >= count * 7 / 10) continue;
        narrow += !wide;
        // The mapping, by turns: the warps of a block where the array is wider than a warp.
        const bool threads = wide && (written - narrow) % 2 == 1;
        const bool rolled = (written / 2) % 2 == 1;
        if (threads) systolic.source.schedule.gpu_threads = {systolic.source.schedule.transform->destination_loops.front()};
        KernelOptions options;
        if (rolled) options.max_unrolled_steps = 0;
        std::vector<std::string> order;
        for (const ir::InputDecl &in : program.inputs) order.push_back(in.name);
        const std::string name = "design" + std::to_string(seed);
        kir::Kernel kernel;
        try {
            kernel = lower_to_kernel(systolic, name, order, options);
            optimize_kernel(kernel);
        } catch (const CompileError &) {
            refused++;  // a mapping the backends refuse (with a message): nothing to run
            continue;
        }
        // The CPU run of the same kernel IR first: a GPU failure is then the printer's or the GPU's.
        const std::string cpu = execute_against_reference(kernel, program, seed);
        if (!cpu.empty()) {
            std::cerr << name << ": the kernel executor disagrees with the reference: " << cpu << "\n" << system_cpp(system, transform);
            mismatches++;
            continue;
        }
        CudaKernelSources sources;
        try {
            sources = print_cuda(kernel, host_header_text(program, name, order, "a random design (seed " + std::to_string(seed) + ")"));
        } catch (const CompileError &) {
            refused++;
            continue;
        }
        const std::filesystem::path out = dir / name;
        std::filesystem::create_directories(out);
        write_file(out / (name + ".h"), sources.header);
        write_file(out / (name + ".cu"), sources.kernel);
        write_file(out / (name + "_check.cu"), sources.check);
        write_file(out / (name + "_reference.h"), emit_reference_cpp(program, name, order));
        write_file(out / "spec.cpp", system_cpp(system, transform));
        const int mapping = threads ? 2 : kernel.pes_per_lane > 1 ? 1 : 0;
        by_mapping[mapping][rolled]++;
        list << name << " " << systolic.pe_count << " PEs " << (threads ? "warps-of-a-block" : mapping ? "several-per-lane" : "one-warp")
             << (rolled ? " rolled" : " unrolled") << " " << program.ures.front().type << "\n";
        written++;
    }
    std::cout << "random designs: " << written << " written to " << dir.string() << " (" << drawn << " systems drawn, " << refused
              << " refused by the kernel mapping, " << mismatches << " kernel-executor mismatches)\n";
    const char *names[] = {"one warp", "several PEs per lane", "warps of a block"};
    for (int m = 0; m < 3; m++) std::cout << "  " << names[m] << ": " << by_mapping[m][0] << " unrolled, " << by_mapping[m][1] << " rolled\n";
    return mismatches ? 1 : 0;
}
