#include "analysis/CheckSchedule.h"

namespace pulse {

void check_schedule(const ir::UreProgram &p) {
    std::map<std::string, int64_t> extents;
    for (const ir::Loop &l : p.loops) extents[l.var] = l.extent;
    for (const ir::Tile &t : p.schedule.tiles) {
        auto it = extents.find(t.var);
        if (it == extents.end()) compile_error(p.name, ".tile(", t.var, "): '", t.var, "' has no extent");
        if (t.factor < 1) {
            compile_error(p.name, ".tile(", t.var, ", ", t.outer, ", ", t.inner, ", ", t.factor, "): the factor must be positive");
        }
        // A factor need not divide the extent: the last tile is partial and guarded.
        extents[t.outer] = (it->second + t.factor - 1) / t.factor;
        extents[t.inner] = t.factor;
    }
    for (const ir::Staging &s : p.schedule.stagings) {
        bool is_input = false;
        for (const ir::InputDecl &in : p.inputs) is_input |= in.name == s.source;
        if (!is_input && p.ure_index(s.source) < 0) {
            compile_error("staging of '", s.source, "': it is neither an input read by ", p.name, " nor a merged Func");
        }
        if (p.ure_index(s.consumer) < 0) {
            compile_error(s.source, ".in(", s.consumer, "): ", s.consumer, " is not merged into the loop nest of ", p.name);
        }
        if (s.compute_at_func && p.ure_index(*s.compute_at_func) < 0) {
            compile_error(s.source, ".compute_at(", *s.compute_at_func, ", ", *s.compute_at_loop, "): ", *s.compute_at_func,
                          " is not merged into the loop nest of ", p.name);
        }
    }
}

}  // namespace pulse
