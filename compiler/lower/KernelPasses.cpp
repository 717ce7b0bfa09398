#include "lower/KernelPasses.h"

#include <chrono>
#include <ostream>

#include "lower/ExchangeAcrossWarps.h"
#include "lower/HoistLoads.h"
#include "lower/PeelLoops.h"
#include "lower/PlaceUniformInputs.h"
#include "lower/PrefetchLoads.h"
#include "lower/SlideWindows.h"
#include "lower/SpecializeInterior.h"
#include "lower/StageInShared.h"
#include "ir/ExactSimplify.h"

namespace pulse {

namespace {

struct KernelPass {
    const char *name;
    void (*run)(kir::Kernel &);
};

/// The pass list, in order.
const KernelPass kernel_passes[] = {
    {"place_uniform_inputs", place_uniform_inputs},
    {"hoist_loads", hoist_loads},
    {"slide_windows", slide_windows},
    {"prefetch_loads", prefetch_loads},
    {"peel_loops", peel_loops},
    {"stage_in_shared", stage_in_shared},
    {"specialize_interior", specialize_interior},
    {"exchange_across_warps", exchange_across_warps},
};

void run_kernel_passes(kir::Kernel &kernel, const KernelPassOptions &options) {
    for (const KernelPass &pass : kernel_passes) {
        if (!options.constant_memory && pass.run == place_uniform_inputs) continue;
        if (!options.register_window && (pass.run == hoist_loads || pass.run == slide_windows || pass.run == prefetch_loads)) continue;
        auto start = std::chrono::steady_clock::now();
        pass.run(kernel);
        kernel.body = simplify_exact(kernel.body);
        if (options.timing) {
            std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
            *options.timing << "pass " << pass.name << ": " << ms.count() << " ms\n";
        }
        if (options.trace && (options.print_after == "all" || options.print_after == pass.name)) {
            *options.trace << "// ---- kernel IR after " << pass.name << "\n";
            kir::print(*options.trace, kernel);
        }
    }
}

}  // namespace

std::vector<std::string> kernel_pass_names() {
    std::vector<std::string> names{"lower_to_kernel"};
    for (const KernelPass &pass : kernel_passes) names.push_back(pass.name);
    return names;
}

void optimize_kernel(kir::Kernel &kernel, const KernelPassOptions &options) {
    kir::on_large_stack([&] { run_kernel_passes(kernel, options); });
}

void optimize_kernel(kir::Kernel &kernel) { optimize_kernel(kernel, KernelPassOptions{}); }

}  // namespace pulse
