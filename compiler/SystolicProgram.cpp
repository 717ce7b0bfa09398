#include "SystolicProgram.h"
namespace pulse {
namespace sys {
void print(std::ostream &, const SystolicProgram &) { compile_error("print: under construction"); }
}  // namespace sys
}  // namespace pulse
