#include "lower/Pipeline.h"

#include <chrono>
#include <ostream>

#include "analysis/AnalyzeDependences.h"
#include "analysis/CheckSchedule.h"
#include "analysis/CheckWellDefined.h"
#include "lower/LowerToSystolic.h"
#include "analysis/Validate.h"
#include "ir/ReferenceOrder.h"

namespace pulse {

void run_front_passes(ir::UreProgram &program) {
    analyze_dependences(program);
    compute_reference_order(program);
    check_schedule(program);
}

}  // namespace pulse

namespace pulse {

sys::SystolicProgram compile_to_systolic(const ir::UreProgram &program, std::vector<DependenceTiming> *validation,
                                         std::ostream *timing) {
    if (!program.schedule.transform) {
        compile_error(program.name, " has no space-time transform: add ", program.name,
                      ".space_time_transform(source loops, destination loops, matrix)");
    }
    auto start = std::chrono::steady_clock::now();
    auto lap = [&](const char *pass) {
        auto now = std::chrono::steady_clock::now();
        if (timing) *timing << "pass " << pass << ": " << std::chrono::duration<double, std::milli>(now - start).count() << " ms\n";
        start = now;
    };
    check_well_defined(program);
    lap("check_well_defined");
    std::vector<DependenceTiming> checked = validate_transform(program);
    lap("validate_transform");
    if (validation) *validation = std::move(checked);
    sys::SystolicProgram systolic = lower_to_systolic(program);
    lap("lower_to_systolic");
    return systolic;
}

}  // namespace pulse
