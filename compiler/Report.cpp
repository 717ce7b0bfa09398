#include "Report.h"
namespace pulse {
void print_report(std::ostream &, const sys::SystolicProgram &, bool) { compile_error("report: under construction"); }
}  // namespace pulse
