#include "analysis/BoundInputReads.h"

#include <algorithm>

#include "analysis/IslModel.h"

namespace pulse {

void bound_input_reads(ir::UreProgram &program) {
    std::vector<std::string> vars;
    for (const ir::Loop &l : program.loops) vars.push_back(l.var);
    const ir::SpaceTimeTransform *transform = program.schedule.transform ? &*program.schedule.transform : nullptr;
    auto in_array = [&](const std::string &var) {
        return transform && std::find(transform->source_loops.begin(), transform->source_loops.end(), var) != transform->source_loops.end();
    };
    isl_model::Context context;
    const isl::set domain = isl_model::runtime_domain(context, program);
    for (ir::InputAccess &access : program.input_accesses) {
        access.excluded.assign(vars.size(), {0, 0});
        if (!access.condition.defined()) continue;
        isl_model::ConditionSet where = isl_model::condition_set(access.condition, domain);
        if (!where.exact || where.set.is_empty()) continue;
        for (size_t i = 0; i < vars.size(); i++) {
            const ir::Loop &loop = program.loops[i];
            isl::val low = where.set.dim_min_val((int)i), high = where.set.dim_max_val((int)i);
            if (low.is_int()) access.excluded[i].first = std::max<int64_t>(0, low.get_num_si() - loop.min);
            if (in_array(vars[i]) && high.is_int()) access.excluded[i].second = std::max<int64_t>(0, loop.max() - high.get_num_si());
        }
    }
}

}  // namespace pulse
