#include "Pipeline.h"

#include "AnalyzeDependences.h"
#include "CheckSchedule.h"
#include "LowerToSystolic.h"
#include "Validate.h"
#include "ReferenceOrder.h"

namespace pulse {

void run_front_passes(ir::UreProgram &program) {
    analyze_dependences(program);
    compute_reference_order(program);
    check_schedule(program);
}

}  // namespace pulse

namespace pulse {

sys::SystolicProgram compile_to_systolic(const ir::UreProgram &program) {
    if (!program.schedule.transform) {
        compile_error(program.name, " has no space-time transform: add ", program.name,
                      ".space_time_transform(source loops, destination loops, matrix)");
    }
    validate_transform(program);
    return lower_to_systolic(program);
}

}  // namespace pulse
