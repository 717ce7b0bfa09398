#include "analysis/CheckDomain.h"

#include <algorithm>

#include "analysis/IslModel.h"

namespace pulse {

namespace {

/// A data bound is lowered as a prefix of the box along its loop in each
/// instance: what holds on the box (validity, the buffers' layouts) holds on
/// every prefix if the loop only advances time (the PEs are the same, each
/// runs the steps of the box up to its bound) and every value is read at the
/// same or a lower point of it (no point below the bound reads one above).
void check_data_bound(const ir::UreProgram &program, const ir::DataBound &bound) {
    const std::string text = program.name + ".where(" + bound.loop + " < " + ir::to_source(bound.upper) + ")";
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    const auto at = std::find(t.source_loops.begin(), t.source_loops.end(), bound.loop);
    if (at == t.source_loops.end()) {
        compile_error(text, ": '", bound.loop, "' is outside the array; an input bounds a loop of the array (a loop outside it ",
                      "takes its extent from the outputs' at run time)");
    }
    const size_t column = at - t.source_loops.begin();
    for (size_t row = 0; row + 1 < t.matrix.size(); row++) {
        if (t.matrix[row][column] != 0) {
            compile_error(text, ": '", bound.loop, "' moves the PEs (space row ", row, " of the transform has ", t.matrix[row][column],
                          " for it); a loop bounded by an input may only advance time, so that every instance runs on the same PEs");
        }
    }
    if (t.matrix.back()[column] <= 0) {
        compile_error(text, ": the time row of the transform has ", t.matrix.back()[column], " for '", bound.loop,
                      "'; a loop bounded by an input must advance time (a positive coefficient), so that an instance ends early");
    }
    for (const std::string &v : t.source_loops) {
        if (Halide::Internal::expr_uses_var(bound.upper, v)) {
            compile_error(text, ": the bound uses '", v, "', a loop of the array; it may use only the loops outside it (one bound per instance)");
        }
    }
    if (program.schedule.gpu_grid_sync) {
        compile_error(text, ": with gpu_grid_sync the instances run in step with each other; an input bounds the loops of ",
                      "independent instances only");
    }
    for (const ir::Ure *u : program.outputs()) {
        if (!u->reduction) continue;  // written point by point, up to the bound
        for (const std::string &a : u->args) {
            if (std::count(t.source_loops.begin(), t.source_loops.end(), a)) {
                compile_error(text, ": output ", u->lhs_text(), " is indexed by '", a, "', a loop of the array; with a bound read ",
                              "from the inputs, each output reduces over whole instances: index it by the loops outside the array");
            }
        }
    }
    const int index = program.loop_index(bound.loop);
    for (const ir::Dependence &d : program.dependences) {
        if (d.distance[index] < 0) {
            compile_error(text, ": ", d.consumer, " reads ", d.call_text, ", at a higher '", bound.loop,
                          "'; a point below the bound would read one above it. A loop bounded by an input may be read at its ",
                          "own or lower values only");
        }
    }
}

}  // namespace

void check_domain(const ir::UreProgram &program) {
    // An output that is not a reduction is written at the points below the
    // bound only; the elements past it keep what the buffer held (a pass's
    // row up to its sequence's length). check_well_defined judges it on the box.
    if (program.schedule.transform) {
        for (const ir::DataBound &b : program.data_bounds) check_data_bound(program, b);
    }
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
