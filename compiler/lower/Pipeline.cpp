#include "lower/Pipeline.h"

#include <chrono>
#include <ostream>

#include "analysis/AnalyzeDependences.h"
#include "analysis/BoundInputReads.h"
#include "analysis/CheckDomain.h"
#include "analysis/CheckSchedule.h"
#include "analysis/CheckWellDefined.h"
#include "ir/ExactSimplify.h"
#include "ir/ReferenceOrder.h"
#include "lower/BatchExchanges.h"
#include "lower/BindRelus.h"
#include "lower/CheckCmSupport.h"
#include "lower/ExchangeAcrossWarps.h"
#include "lower/HoistLoads.h"
#include "lower/NarrowIndexComparisons.h"
#include "lower/LowerToSystolic.h"
#include "lower/PackInstances.h"
#include "lower/PeelLoops.h"
#include "lower/SplitAtDataBounds.h"
#include "lower/SplitSteadyState.h"
#include "lower/PlaceUniformInputs.h"
#include "lower/PrefetchLoads.h"
#include "lower/SlideWindows.h"
#include "lower/ShareRecomputedValues.h"
#include "lower/ShareRepeatedLoads.h"
#include "lower/ShortenGuardedLoops.h"
#include "lower/SpecializeInterior.h"
#include "lower/StageInShared.h"
#include "lower/VoteUniformTests.h"

namespace pulse {

namespace {

bool always(const Target &) { return true; }
bool has_constant_bank(const Target &t) { return t.has_constant_bank(); }
bool keeps_register_windows(const Target &t) { return t.keeps_register_windows(); }
bool has_warp_vote(const Target &t) { return t.has_warp_vote(); }
bool is_cm(const Target &t) { return t.is_cm(); }
bool has_32_bit_indices(const Target &t) { return t.has_32_bit_indices(); }

struct KernelPass {
    const char *name;
    void (*run)(kir::Kernel &, const Target &);
    bool (*applies)(const Target &);
    /// Followed by simplify_exact (all but bind_relus, whose relus Halide's
    /// simplifier would strip off the lets again).
    bool simplify_after = true;
};

/// A pass that does not read the target, in the table.
template <void (*pass)(kir::Kernel &)>
void any_target(kir::Kernel &kernel, const Target &) {
    pass(kernel);
}

void check_cm_support_pass(kir::Kernel &kernel, const Target &target) { check_cm_support(kernel, target.cm); }

/// The kernel passes, in order.
const KernelPass kernel_passes[] = {
    {"place_uniform_inputs", any_target<place_uniform_inputs>, has_constant_bank},
    {"hoist_loads", any_target<hoist_loads>, keeps_register_windows},
    {"slide_windows", any_target<slide_windows>, keeps_register_windows},
    {"prefetch_loads", any_target<prefetch_loads>, keeps_register_windows},
    {"split_steady_state", any_target<split_steady_state>, always},
    {"peel_loops", any_target<peel_loops>, always},
    {"stage_in_shared", any_target<stage_in_shared>, always},
    {"specialize_interior", any_target<specialize_interior>, always},
    {"shorten_guarded_loops", any_target<shorten_guarded_loops>, always},
    {"split_at_data_bounds", any_target<split_at_data_bounds>, always},
    {"batch_exchanges", any_target<batch_exchanges>, always},
    {"exchange_across_warps", any_target<exchange_across_warps>, always},
    {"vote_uniform_tests", any_target<vote_uniform_tests>, has_warp_vote},
    {"narrow_index_comparisons", any_target<narrow_index_comparisons>, has_32_bit_indices},
    {"pack_instances", any_target<pack_instances>, always},
    {"share_repeated_loads", any_target<share_repeated_loads>, always},
    {"share_recomputed_values", any_target<share_recomputed_values>, always},
    {"bind_relus", any_target<bind_relus>, always, false},
    {"check_cm_support", check_cm_support_pass, is_cm},
};

/// Runs `body` as the pass `name`: timed, and followed by `print` (the IR
/// after it) where the trace asks.
template <typename Body, typename Print>
void run_pass(const char *name, const PassTrace &trace, Body &&body, Print &&print) {
    auto start = std::chrono::steady_clock::now();
    body();
    if (trace.timing) {
        std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
        *trace.timing << "pass " << name << ": " << ms.count() << " ms\n";
    }
    if (trace.ir && (trace.print_after == "all" || trace.print_after == name)) print();
}

void print_kernel_after(const PassTrace &trace, const char *pass, const kir::Kernel &kernel) {
    *trace.ir << "// ---- kernel IR after " << pass << "\n";
    kir::print(*trace.ir, kernel);
}

}  // namespace

void run_front_passes(ir::UreProgram &program) {
    analyze_dependences(program);
    check_domain(program);  // (a data bound's check reads the dependences)
    bound_input_reads(program);
    compute_reference_order(program);
    check_schedule(program);
}

sys::SystolicProgram compile_to_systolic(const ir::UreProgram &program, std::vector<DependenceTiming> *validation,
                                         const PassTrace &trace) {
    if (!program.schedule.transform) {
        compile_error(program.name, " has no space-time transform: add ", program.name,
                      ".space_time_transform(source loops, destination loops, matrix)");
    }
    auto nothing = [] {};
    // Again here: a design may change the transform the front passes saw.
    run_pass("check_domain", trace, [&] { check_domain(program); }, nothing);
    run_pass("check_well_defined", trace, [&] { check_well_defined(program); }, nothing);
    run_pass("validate_transform", trace, [&] {
        std::vector<DependenceTiming> checked = validate_transform(program);
        if (validation) *validation = std::move(checked);
    }, nothing);
    sys::SystolicProgram systolic;
    run_pass("lower_to_systolic", trace, [&] { systolic = lower_to_systolic(program); }, [&] {
        *trace.ir << "// ---- systolic IR after lower_to_systolic\n";
        sys::print(*trace.ir, systolic);
    });
    return systolic;
}

void optimize_kernel(kir::Kernel &kernel, const Target &target, const PassTrace &trace) {
    kir::on_large_stack([&] {
        for (const KernelPass &pass : kernel_passes) {
            if (!pass.applies(target)) continue;
            run_pass(pass.name, trace, [&] {
                pass.run(kernel, target);
                if (pass.simplify_after) kernel.body = simplify_exact(kernel.body);
            }, [&] { print_kernel_after(trace, pass.name, kernel); });
        }
    });
}

void optimize_kernel(kir::Kernel &kernel) { optimize_kernel(kernel, Target::cuda()); }

kir::Kernel lower_to_target(const sys::SystolicProgram &program, const std::string &name,
                            const std::vector<std::string> &input_order, const KernelOptions &options, const Target &target,
                            const PassTrace &trace) {
    kir::Kernel kernel;
    run_pass("lower_to_kernel", trace, [&] { kernel = lower_to_kernel(program, name, input_order, options); },
             [&] { print_kernel_after(trace, "lower_to_kernel", kernel); });
    optimize_kernel(kernel, target, trace);
    return kernel;
}

std::vector<std::string> printable_pass_names() {
    std::vector<std::string> names{"lower_to_systolic", "lower_to_kernel"};
    for (const KernelPass &pass : kernel_passes) names.push_back(pass.name);
    return names;
}

}  // namespace pulse
