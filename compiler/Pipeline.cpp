#include "Pipeline.h"

#include "AnalyzeDependences.h"
#include "CheckSchedule.h"
#include "ReferenceOrder.h"

namespace pulse {

void run_front_passes(ir::UreProgram &program) {
    analyze_dependences(program);
    compute_reference_order(program);
    check_schedule(program);
}

}  // namespace pulse
