#include "analysis/CheckDomain.h"

#include <algorithm>

#include "analysis/IslModel.h"

namespace pulse {

void check_domain(const ir::UreProgram &program) {
    if (program.constraints.empty()) return;
    if (program.schedule.transform) {
        const std::vector<std::string> &array = program.schedule.transform->source_loops;
        for (const Halide::Expr &c : program.constraints) {
            for (const ir::Loop &l : program.loops) {
                if (std::count(array.begin(), array.end(), l.var) || !Halide::Internal::expr_uses_var(c, l.var)) continue;
                std::string loops;
                for (const std::string &v : array) loops += (loops.empty() ? "" : ", ") + v;
                compile_error(program.name, ": the domain condition ", ir::to_source(c), " uses loop '", l.var,
                              "', which is outside the array (the transform's source loops are ", loops,
                              "); every array instance has the same domain, so a condition may use only the array's loops");
            }
        }
    }
    isl_model::Context context;
    std::vector<std::string> loops;
    for (const ir::Loop &l : program.loops) loops.push_back(l.var);
    // iteration_domain refuses a condition that is not affine.
    if (isl_model::iteration_domain(context, program, loops).is_empty()) {
        std::string all;
        for (const Halide::Expr &c : program.constraints) all += (all.empty() ? "" : " && ") + ir::to_source(c);
        compile_error(program.name, ": the domain is empty: no point of the loops' bounds satisfies ", all);
    }
}

}  // namespace pulse
