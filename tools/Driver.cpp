#include "Driver.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "codegen/CodeGenCM.h"
#include "codegen/CodeGenCudaKernel.h"
#include "codegen/CodeGenOpenCL.h"
#include "codegen/CodeGenReference.h"
#include "Emit.h"
#include "IntelCompile.h"
#include "exec/InputRegions.h"
#include "exec/KernelExecutor.h"
#include "lower/LowerToKernel.h"
#include "exec/Interpreter.h"
#include "lower/Pipeline.h"
#include "analysis/Report.h"
#include "exec/Simulator.h"
#include "analysis/Validate.h"

namespace pulse {

Progress progress_on_stderr(const std::string &what, const std::string &units) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    auto last = std::make_shared<Clock::time_point>(start);
    // PULSE_PROGRESS_INTERVAL: seconds between lines (default 1; 0 reports
    // every time the evaluation does, which makes the output testable).
    std::chrono::duration<double> interval(1.0);
    if (const char *env = std::getenv("PULSE_PROGRESS_INTERVAL")) {
        char *end = nullptr;
        const double seconds = std::strtod(env, &end);
        if (end != env && *end == '\0' && seconds >= 0) interval = std::chrono::duration<double>(seconds);
    }
    return [=](int64_t done, int64_t total) {
        const Clock::time_point now = Clock::now();
        if (now - start < interval || now - *last < interval) return;
        *last = now;
        std::cerr << what << ": " << (total > 0 ? 100 * done / total : 0) << "% (" << done << " of " << total << " " << units
                  << ", " << std::chrono::duration_cast<std::chrono::seconds>(now - start).count() << " s)" << std::endl;
    };
}

const char *driver_usage_text() {
    static const std::string text = std::string(
           "  --check             validate the space-time transform (data and processor availability)\n"
           "  --report[=json]     analysis of the systolic design: PEs, steps, dataflow classes, registers\n"
           "  --print-systolic    print the lowered systolic program\n"
           "  --simulate          run the systolic simulator and the reference on random inputs; PASS or\n"
           "                      the first mismatching output\n"
           "  --print-kernel      print the kernel IR (the GPU mapping) after its passes, for each target\n"
           "                      emitted (--emit cuda, cm), CUDA when none is\n"
           "  --print-after=PASS  print the IR after lower_to_systolic, lower_to_kernel or a kernel pass (or all)\n"
           "  --execute-kernel    run the kernel IR on the CPU (lanes in lock step) against the reference; PASS\n"
           "                      or the first mismatching output (each target's kernel)\n"
           "  --emit BACKEND      write generated code (BACKEND: cuda, cm, opencl) into the -o directory;\n"
           "                      cm-emu builds the CM kernel against the CPU emulation and runs it\n"
           "  --intel-devices=LIST  compile what --emit cm / opencl wrote with Intel's offline compiler (ocloc)\n"
           "                      for each device of LIST (kbl, tgllp, dg2, pvc, comma-separated, or all):\n"
           "                      NAME_DEVICE.bin and a line of registers, spills and instructions each\n"
           "  --allow-spills      keep a kernel Intel's compiler spills registers of (refused by default)\n"
           "  --name=NAME         name of the emitted kernel and its host function (default: the spec's)\n"
           "  --min-blocks-per-sm=N  CUDA: __launch_bounds__(threads, N), registers capped so that N blocks fit\n"
           "                      an SM (the compiler spills beyond; an occupancy choice, 1 to 32)\n"
           "  --max-shared-bytes=N  CUDA: shared memory a block's arrays may take (default 49152); past it the\n"
           "                      kernel uses dynamic shared memory, up to 232448 (227 KiB, sm_90's opt-in limit)\n"
           "  --pes-per-thread=N  an array over the warps of a block (gpu_threads): N PEs per thread, 1 to 8 (default:\n"
           "                      one up to 1024 PEs, else the fewest that fit a block); on a 2-D array over the\n"
           "                      warps (gpu_threads(x, y)), N values of y per warp, a tile of PEs per thread (up to\n"
           "                      64 PEs, with the lanes' values of x)\n"
           "  --prefetch          per-thread loops (split) issue each iteration's loads during the one before (CUDA)\n"
           "  --shared-steps=N    CUDA: inputs cached in shared memory are staged N steps of a rolled loop at a\n"
           "                      time, not the whole array instance's box (operands of a long time loop)\n"
           "  --double-buffer     with --shared-steps: each run's copy is loaded while the run before computes\n"
           "  --strided-first-dimension  CUDA: index dimension 0 of the buffers by its run-time stride and accept any\n"
           "                      (default: dense, stride 1, as Halide; the host function refuses another)\n"
           "  --time-passes       print the time of each pass from the URE program to the emitted code\n"
           "  --unroll-steps=N    unroll at most N array steps (times unrolled rows and PEs per lane); a longer\n"
           "                      time loop runs as a loop over blocks of its period (default 1024; 0: always)\n"
           "  -o DIR              output directory of --emit (required with --emit; created if missing) and of\n"
           "                      --explore (default .)\n"
           "  (--realize, --simulate and --execute-kernel report progress on stderr every\n"
           "  PULSE_PROGRESS_INTERVAL seconds, default 1, once they run longer)\n") + explore_usage_text();
    return text.c_str();
}

namespace {

/// The integer after the '=' of `flag` (--NAME=N), which must lie in [min,
/// max]; else an error naming the flag and `expected`.
int64_t flag_count(const std::string &flag, int64_t min, int64_t max, const std::string &expected) {
    const size_t equals = flag.find('=');
    const std::string v = flag.substr(equals + 1);
    char *end = nullptr;
    errno = 0;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || errno || n < min || n > max) compile_error(flag.substr(0, equals + 1), v, ": expected ", expected);
    return n;
}

}  // namespace

bool parse_driver_flag(const std::string &flag, int &i, int argc, char **argv, DriverActions &a) {
    if (parse_explore_flag(flag, i, argc, argv, a.explore)) return true;
    if (flag == "--check") a.check = true;
    else if (flag == "--report") a.report = true;
    else if (flag == "--report=json") a.report_json = true;
    else if (flag == "--report=text") a.report = true;
    else if (flag == "--print-systolic") a.print_systolic = true;
    else if (flag == "--simulate") a.simulate = true;
    else if (flag == "--print-kernel") a.print_kernel = true;
    else if (flag == "--execute-kernel") a.execute_kernel = true;
    else if (flag.rfind("--print-after=", 0) == 0) {
        a.print_after = flag.substr(14);
        std::vector<std::string> passes = printable_pass_names();
        if (a.print_after != "all" && std::find(passes.begin(), passes.end(), a.print_after) == passes.end()) {
            std::string list;
            for (const std::string &p : passes) list += (list.empty() ? "" : ", ") + p;
            compile_error("--print-after=", a.print_after, ": no such pass; the passes whose IR it prints are ", list, " (or all)");
        }
    } else if (flag == "--time-passes") a.time_passes = true;
    else if (flag.rfind("--name=", 0) == 0) a.kernel_name = flag.substr(7);
    else if (flag == "--prefetch") a.prefetch_walks = true;
    else if (flag == "--double-buffer") a.double_buffer = true;
    else if (flag == "--strided-first-dimension") a.strided_first_dimension = true;
    else if (flag.rfind("--min-blocks-per-sm=", 0) == 0) {
        a.min_blocks_per_sm = (int)flag_count(flag, 1, 32, "a count in [1, 32]");
    } else if (flag.rfind("--max-shared-bytes=", 0) == 0) {
        a.max_shared_bytes = flag_count(flag, 1, kir::max_opt_in_shared_bytes,
                                        "a byte count in [1, " + std::to_string(kir::max_opt_in_shared_bytes) +
                                            "] (227 KiB: the most a block may opt in to on sm_90)");
    } else if (flag.rfind("--pes-per-thread=", 0) == 0) {
        a.pes_per_thread = flag_count(flag, 1, max_pes_per_lane_two_dimensional,
                                      "a count in [1, " + std::to_string(max_pes_per_lane_two_dimensional) + "]");
    } else if (flag.rfind("--shared-steps=", 0) == 0) {
        a.shared_steps = flag_count(flag, 1, 1 << 20, "a count in [1, 1048576]");
    } else if (flag.rfind("--unroll-steps=", 0) == 0) {
        a.max_unrolled_steps = flag_count(flag, 0, INT64_MAX, "a count >= 0");
    }
    else if (flag.rfind("--intel-devices=", 0) == 0) {
        const std::string v = flag.substr(16);
        a.intel_devices.clear();
        std::stringstream list(v);
        std::string device;
        while (std::getline(list, device, ',')) {
            const std::vector<std::string> &known = intel_devices();
            if (device == "all") {
                a.intel_devices.insert(a.intel_devices.end(), known.begin(), known.end());
            } else if (std::find(known.begin(), known.end(), device) != known.end()) {
                a.intel_devices.push_back(device);
            } else {
                compile_error("--intel-devices=", v, ": unknown device '", device, "'; use kbl, tgllp, dg2, pvc or all");
            }
        }
        if (a.intel_devices.empty()) compile_error("--intel-devices= needs a device: kbl, tgllp, dg2, pvc or all");
    } else if (flag == "--allow-spills") a.allow_spills = true;
    else if (flag == "--emit" || flag == "-o") {
        if (i + 1 >= argc) compile_error(flag, " needs a value; see --help");
        std::string v = argv[++i];
        if (flag == "-o") {
            a.output_dir = v;
        } else {
            if (v != "cuda" && v != "cm" && v != "cm-emu" && v != "opencl") {
                compile_error("--emit ", v, ": unknown backend; use cuda, cm, cm-emu or opencl");
            }
            a.emit.push_back(v);
        }
    } else {
        return false;
    }
    return true;
}

/// Prints one line per device of Intel's compilation of `name`'s `backend`
/// kernel; 1 if one failed, or spilled without `allow_spills`.
static int report_intel_builds(const std::string &name, const std::string &backend, const std::vector<IntelBuild> &builds, bool allow_spills) {
    int status = 0;
    for (const IntelBuild &b : builds) {
        std::cout << name << ": " << backend << " for Intel " << b.summary();
        if (b.compiled) std::cout << " (" << b.binary << ")";
        std::cout << "\n";
        if (!b.compiled) {
            std::cout << b.log << (b.log.empty() || b.log.back() == '\n' ? "" : "\n");
            status = 1;
        } else if (b.spill_bytes > 0 && !allow_spills) {
            std::cout << name << ": error: Intel's compiler spills " << b.spill_bytes << " bytes of registers to memory on " << b.device
                      << ", which defeats a systolic array: choose a design with fewer live values per PE (--report lists the registers),"
                         " or pass --allow-spills to keep it\n";
            status = 1;
        }
    }
    return status;
}

int run_driver_actions(const std::string &spec_name, const Spec &spec, const DriverActions &a, uint32_t seed) {
    if (!(a.check || a.report || a.report_json || a.print_systolic || a.simulate || a.print_kernel || !a.print_after.empty() ||
          a.execute_kernel || !a.emit.empty() || a.time_passes || a.explore.explore)) {
        return 0;
    }
    if (a.explore.explore) return run_exploration(spec_name, spec.output.lower(), a.explore, a.output_dir);
    std::ostream *timing = a.time_passes ? &std::cout : nullptr;
    auto start = std::chrono::steady_clock::now();
    auto lap = [&](const char *pass) {
        auto now = std::chrono::steady_clock::now();
        if (timing) *timing << "pass " << pass << ": " << std::chrono::duration<double, std::milli>(now - start).count() << " ms\n";
        start = now;
    };
    // --design ID (or best, the candidate ranked first): a candidate of the
    // exploration in place of the spec's own design.
    int64_t design = a.explore.design;
    std::optional<Explorer> explorer;
    if (design != -1) explorer.emplace(spec.output.lower(), a.explore);
    if (design == ExploreOptions::best_design) {
        design = explorer->best_design();
        std::cout << spec_name << ": --design best is candidate " << design << "\n";
    }
    ir::UreProgram program = design >= 0 ? explorer->program(design) : spec.output.lower();
    const std::string default_name = spec_name + (design >= 0 ? "_d" + std::to_string(design) : "");
    lap("lower (the front passes)");
    std::vector<std::string> input_order;  // the spec's order: the generated functions' arguments
    for (const Input &in : spec.inputs) input_order.push_back(in.name());
    // Every stage runs once: the validator's findings are printed by --check.
    std::vector<DependenceTiming> validation;
    auto validate_start = std::chrono::steady_clock::now();
    const PassTrace trace{timing, &std::cout, a.print_after};
    sys::SystolicProgram systolic = compile_to_systolic(program, &validation, trace);
    start = std::chrono::steady_clock::now();
    if (a.check) {
        double ms = std::chrono::duration<double, std::milli>(start - validate_start).count();
        std::cout << spec_name << ": transform is valid (" << validation.size() << " dependences checked; validated and lowered in "
                  << ms << " ms)\n";
        for (const DependenceTiming &t : validation) {
            std::cout << "  " << t.dependence->consumer << " <- " << t.dependence->call_text << ": dp = " << t.dp
                      << ", dt = " << t.dt << (t.taken ? "" : " (never taken on the domain)") << "\n";
        }
    }
    if (a.print_systolic) sys::print(std::cout, systolic);
    if (a.report) print_report(std::cout, systolic, false);
    if (a.report_json) print_report(std::cout, systolic, true);
    int status = 0;
    if (a.simulate) {
        Buffers inputs = random_input_buffers(program, seed);
        Buffers expected = ir::realize(program, inputs, progress_on_stderr(spec_name + ": --simulate: reference", "points"));
        Buffers actual = simulate(systolic, inputs, progress_on_stderr(spec_name + ": --simulate: systolic array", "array instances"));
        std::string mismatch = compare_outputs(expected, actual);
        std::cout << spec_name << ": simulate (" << systolic.pe_count << " PEs x " << systolic.steps() << " steps): "
                  << (mismatch.empty() ? "PASS" : "FAIL: " + mismatch) << "\n";
        if (!mismatch.empty()) status = 1;
    }
    // The targets: one per backend emitted (cm-emu prints CM), CUDA where none is.
    std::vector<Target> targets;
    for (const std::string &backend : a.emit) {
        if (backend != "cuda" && backend != "cm" && backend != "cm-emu" && backend != "opencl") {
            compile_error("--emit ", backend, ": this backend is not built into this version of Pulse");
        }
        const Target t = backend == "cuda" ? Target::cuda() : Target::cm_gen9();
        if (std::none_of(targets.begin(), targets.end(), [&](const Target &x) { return x.name() == t.name(); })) targets.push_back(t);
        if (t.is_cm() && a.min_blocks_per_sm) {
            compile_error("--min-blocks-per-sm applies to CUDA (__launch_bounds__); the Intel backends (--emit ", backend,
                          ") has no such bound: drop the flag for CM");
        }
        if (t.is_cm() && a.max_shared_bytes) {
            compile_error("--max-shared-bytes applies to CUDA; the Intel backends (--emit ", backend,
                          ") has no shared memory: drop the flag for CM");
        }
        if (t.is_cm() && a.strided_first_dimension) {
            compile_error("--strided-first-dimension applies to CUDA; the Intel backends (--emit ", backend,
                          ") build every buffer dense themselves: drop the flag for CM");
        }
        if (t.is_cm() && a.shared_steps) {
            compile_error("--shared-steps applies to CUDA; the Intel backends (--emit ", backend,
                          ") has no shared memory: drop the flag for CM");
        }
        if (t.is_cm() && a.prefetch_walks) {
            compile_error("--prefetch applies to CUDA; the Intel backends (--emit ", backend,
                          ") keeps no register windows to prefetch into: drop the flag for CM");
        }
    }
    if (targets.empty()) targets.push_back(Target::cuda());
    const bool intel_emit = std::any_of(a.emit.begin(), a.emit.end(), [](const std::string &b) { return b == "cm" || b == "opencl"; });
    if (!a.intel_devices.empty() && !intel_emit) {
        compile_error("--intel-devices compiles what --emit cm or --emit opencl writes: add one of them");
    }
    if (a.allow_spills && a.intel_devices.empty()) compile_error("--allow-spills applies to --intel-devices: add it, or drop the flag");
    for (const std::string &backend : a.emit) {
        if (a.intel_devices.empty() || (backend != "cm" && backend != "opencl")) continue;
        const std::string missing = missing_intel_tools(backend == "cm");
        if (!missing.empty()) compile_error("--intel-devices with --emit ", backend, ": ", missing);
    }
    if (!(a.print_kernel || !a.print_after.empty() || a.execute_kernel || !a.emit.empty())) return status;
    KernelOptions options;
    if (a.max_unrolled_steps >= 0) options.max_unrolled_steps = a.max_unrolled_steps;
    options.prefetch_walks = a.prefetch_walks;
    options.dense_first_dimension = !a.strided_first_dimension;
    options.min_blocks_per_sm = a.min_blocks_per_sm;
    if (a.max_shared_bytes) options.max_shared_bytes = a.max_shared_bytes;
    options.pes_per_thread = a.pes_per_thread;
    options.shared_steps = a.shared_steps;
    options.shared_double_buffer = a.double_buffer;
    const std::string name = a.kernel_name.empty() ? default_name : a.kernel_name;
    for (const Target &target : targets) {
        // The kernel IR of this target, lowered and optimized once for every action that needs it.
        const std::string label = targets.size() > 1 ? target.name() + ", " : "";
        if (targets.size() > 1 && (a.print_kernel || !a.print_after.empty())) std::cout << "// ==== target " << target.name() << "\n";
        const kir::Kernel kernel = lower_to_target(systolic, name, input_order, options, target, trace);
        if (a.print_kernel) kir::print(std::cout, kernel);
        if (a.execute_kernel) {
            std::string mismatch =
                execute_against_reference(kernel, program, seed, progress_on_stderr(spec_name + ": --execute-kernel: reference", "points"),
                                          progress_on_stderr(spec_name + ": --execute-kernel: kernel", "warps"));
            std::cout << spec_name << ": execute-kernel (" << label << systolic.pe_count << " PEs x " << systolic.steps()
                      << " steps): " << (mismatch.empty() ? "PASS" : "FAIL: " + mismatch) << "\n";
            if (!mismatch.empty()) status = 1;
        }
        for (const std::string &backend : a.emit) {
            if ((backend == "cuda") != target.is_cuda()) continue;
            start = std::chrono::steady_clock::now();
            if (backend == "cuda") {
                // The kernel IR printed as CUDA, with its host header, the reference
                // order as C++ and a harness that checks one against the other.
                std::vector<GeneratedFile> files = print_cuda_files(kernel, program, input_order, spec_description(spec_name));
                lap("print_cuda");
                write_files(a.output_dir, files);
                std::cout << name << ": wrote " << name << ".cu, " << name << ".h, " << name << "_reference.h, " << name
                          << "_check.cu in " << a.output_dir << "\n";
                continue;
            }
            if (backend == "opencl") {
                // The CM target's kernel IR as OpenCL C, its host program and the reference.
                write_files(a.output_dir, print_opencl(kernel, program, input_order));
                lap("print_opencl");
                std::cout << name << ": wrote " << name << ".cl, " << name << "_opencl_host.cpp, " << name << "_reference.h in "
                          << a.output_dir << "\n";
                if (!a.intel_devices.empty()) {
                    const std::string source = (std::filesystem::path(a.output_dir) / (name + ".cl")).string();
                    status = std::max(status,
                                      report_intel_builds(name, "opencl", compile_opencl_for_intel(source, a.intel_devices), a.allow_spills));
                }
                continue;
            }
            // The kernel, Level Zero host code and the reference; cm-emu also
            // builds the kernel against the CPU emulation of CM and runs it.
            std::vector<GeneratedFile> files = print_cm(kernel, target, program, input_order, backend == "cm-emu");
            lap("print_cm");
            write_files(a.output_dir, files);
            if (backend == "cm") {
                std::cout << name << ": wrote " << name << "_genx.cpp, " << name << "_host.cpp, " << name << "_reference.h in "
                          << a.output_dir << "\n";
                if (!a.intel_devices.empty()) {
                    const std::string source = (std::filesystem::path(a.output_dir) / (name + "_genx.cpp")).string();
                    status = std::max(status, report_intel_builds(name, "cm", compile_cm_for_intel(source, a.intel_devices), a.allow_spills));
                }
                continue;
            }
            std::string source = (std::filesystem::path(a.output_dir) / (name + "_emu.cpp")).string();
            std::string binary = (std::filesystem::path(a.output_dir) / (name + "_emu")).string();
            std::string log;
            if (run_command(cm_emulation_compile_command(source, binary), &log) != 0) {
                std::cout << name << ": cm-emu: FAIL: " << source << " does not compile:\n" << log;
                status = 1;
                continue;
            }
            // Instances 0: the extent the spec gave.
            int rc = run_command("'" + binary + "' 0 " + std::to_string(seed) + " 2>&1", &log);
            std::cout << name << ": cm-emu (" << systolic.pe_count << " PEs x " << systolic.steps() << " steps): " << log;
            if (rc != 0) status = 1;
        }
    }
    return status;
}

}  // namespace pulse
