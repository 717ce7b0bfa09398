#include "LowerToSystolic.h"
namespace pulse {
sys::SystolicProgram lower_to_systolic(const ir::UreProgram &) { compile_error("lowering: under construction"); }
}  // namespace pulse
