#include "Driver.h"

#include <chrono>
#include <iostream>

#include "InputRegions.h"
#include "Interpreter.h"
#include "Pipeline.h"
#include "Report.h"
#include "Simulator.h"
#include "Validate.h"

namespace pulse {

const char *driver_usage_text() {
    return "  --check             validate the space-time transform (data and processor availability)\n"
           "  --report[=json]     analysis of the systolic design: PEs, steps, dataflow classes, registers\n"
           "  --print-systolic    print the lowered systolic program\n"
           "  --simulate          run the systolic simulator and the reference on random inputs; PASS or\n"
           "                      the first mismatching output\n"
           "  --emit BACKEND      write generated code (BACKEND: cuda, cm) into the -o directory;\n"
           "                      cm-emu builds the CM kernel against the CPU emulation and runs it\n"
           "  -o DIR              output directory of --emit (default .)\n";
}

bool parse_driver_flag(const std::string &flag, int &i, int argc, char **argv, DriverActions &a) {
    if (flag == "--check") a.check = true;
    else if (flag == "--report") a.report = true;
    else if (flag == "--report=json") a.report_json = true;
    else if (flag == "--report=text") a.report = true;
    else if (flag == "--print-systolic") a.print_systolic = true;
    else if (flag == "--simulate") a.simulate = true;
    else if (flag == "--emit" || flag == "-o") {
        if (i + 1 >= argc) compile_error(flag, " needs a value; see --help");
        std::string v = argv[++i];
        if (flag == "-o") {
            a.output_dir = v;
        } else {
            if (v != "cuda" && v != "cm" && v != "cm-emu") compile_error("--emit ", v, ": unknown backend; use cuda, cm or cm-emu");
            a.emit.push_back(v);
        }
    } else {
        return false;
    }
    return true;
}

int run_driver_actions(const std::string &spec_name, const Spec &spec, const DriverActions &a, uint32_t seed) {
    if (!(a.check || a.report || a.report_json || a.print_systolic || a.simulate || !a.emit.empty())) return 0;
    ir::UreProgram program = spec.output.lower();
    if (a.check) {
        auto start = std::chrono::steady_clock::now();
        std::vector<DependenceTiming> timings = validate_transform(program);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        std::cout << spec_name << ": transform is valid (" << timings.size() << " dependences checked, " << ms << " ms)\n";
        for (const DependenceTiming &t : timings) {
            std::cout << "  " << t.dependence->consumer << " <- " << t.dependence->call_text << ": dp = " << t.dp
                      << ", dt = " << t.dt << (t.taken ? "" : " (never taken on the domain)") << "\n";
        }
    }
    sys::SystolicProgram systolic = compile_to_systolic(program);
    if (a.print_systolic) sys::print(std::cout, systolic);
    if (a.report) print_report(std::cout, systolic, false);
    if (a.report_json) print_report(std::cout, systolic, true);
    int status = 0;
    if (a.simulate) {
        Buffers inputs = random_input_buffers(program, seed);
        Buffers expected = ir::realize(program, inputs);
        Buffers actual = simulate(systolic, inputs);
        std::string mismatch = compare_outputs(expected, actual);
        std::cout << spec_name << ": simulate (" << systolic.pe_count << " PEs x " << systolic.steps() << " steps): "
                  << (mismatch.empty() ? "PASS" : "FAIL: " + mismatch) << "\n";
        if (!mismatch.empty()) status = 1;
    }
    // Backends: --emit cuda / cm / cm-emu.
    for (const std::string &backend : a.emit) {
        compile_error("--emit ", backend, ": this backend is not built into this version of Pulse");
    }
    return status;
}

}  // namespace pulse
