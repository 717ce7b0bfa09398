// The actions of the generator command line that run compiler stages
// (--check, --report, --simulate, --emit ...). generator_main (Generator.cpp)
// parses the common flags and hands the rest here, so each stage adds its
// flag in one place.
#ifndef PULSE_DRIVER_H
#define PULSE_DRIVER_H

#include <string>

#include "Explore.h"
#include "exec/Progress.h"
#include "pulse/pulse.h"

namespace pulse {

struct DriverActions {
    bool realize = false;
    bool print_ir = false;
    bool check = false;
    bool report = false;
    bool report_json = false;
    bool print_systolic = false;
    bool simulate = false;
    bool print_kernel = false;       ///< the kernel IR after the passes
    std::string print_after;         ///< a kernel pass name, or "all"
    bool execute_kernel = false;     ///< run the kernel IR on the CPU against the reference
    std::vector<std::string> emit;   ///< backends to emit: cuda, cm, cm-emu, opencl
    std::vector<std::string> intel_devices;  ///< --intel-devices: compile --emit cm / opencl for these (IntelCompile.h)
    bool allow_spills = false;       ///< --allow-spills: a kernel Intel's compiler spills is reported, not refused
    std::string output_dir;          ///< -o: where --emit writes (required with --emit)
    std::string kernel_name;         ///< --name: the emitted kernel's name (default: the spec's)
    int64_t max_unrolled_steps = -1; ///< --unroll-steps: KernelOptions::max_unrolled_steps (-1: its default)
    bool prefetch_walks = false;     ///< --prefetch: KernelOptions::prefetch_walks
    bool strided_first_dimension = false;  ///< --strided-first-dimension: !KernelOptions::dense_first_dimension
    int min_blocks_per_sm = 0;       ///< --min-blocks-per-sm: KernelOptions::min_blocks_per_sm
    int64_t max_shared_bytes = 0;    ///< --max-shared-bytes: KernelOptions::max_shared_bytes (0: the default)
    int64_t pes_per_thread = 0;      ///< --pes-per-thread: KernelOptions::pes_per_thread (0: its default)
    int64_t shared_steps = 0;        ///< --shared-steps: KernelOptions::shared_steps (0: whole instances)
    bool double_buffer = false;      ///< --double-buffer: KernelOptions::shared_double_buffer
    bool time_passes = false;        ///< --time-passes: each pass's time
    ExploreOptions explore;          ///< --explore and its options; --design
    bool any() const { return realize || print_ir || check || report || report_json || print_systolic || simulate || print_kernel || !print_after.empty() || execute_kernel || !emit.empty() || time_passes || explore.explore; }
};

/// Help text for the flags parse_driver_flag accepts.
const char *driver_usage_text();

/// Parses flag argv[i] (advancing i past its value); false if it is not a driver flag.
bool parse_driver_flag(const std::string &flag, int &i, int argc, char **argv, DriverActions &actions);

/// Progress of a CPU evaluation printed to stderr, once a second after the
/// first second: "WHAT: 45% (3600000 of 8000000 UNITS, 2 s)".
Progress progress_on_stderr(const std::string &what, const std::string &units);

/// Runs the compiler actions; returns the process exit code.
int run_driver_actions(const std::string &spec_name, const Spec &spec, const DriverActions &actions, uint32_t seed);

}  // namespace pulse

#endif
