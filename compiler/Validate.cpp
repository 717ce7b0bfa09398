#include "Validate.h"
namespace pulse {
std::vector<DependenceTiming> validate_transform(const ir::UreProgram &) { compile_error("validator: under construction"); }
}  // namespace pulse
