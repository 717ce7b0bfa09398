#include "ir/Target.h"

#include <algorithm>
#include <cctype>

namespace pulse {

Target Target::cuda(int arch) {
    Target t;
    t.backend = Backend::Cuda;
    t.cuda_arch = arch;
    return t;
}

Target Target::cm_gen9() {
    Target t;
    t.backend = Backend::CM;
    t.cm = CmTarget::gen9();
    return t;
}

std::string Target::name() const {
    if (is_cuda()) return "cuda-sm_" + std::to_string(cuda_arch);
    std::string gen = cm.name;
    std::transform(gen.begin(), gen.end(), gen.begin(), [](unsigned char c) { return (char)std::tolower(c); });
    return "cm-" + gen;
}

}  // namespace pulse
