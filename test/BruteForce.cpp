#include "BruteForce.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "exec/ExprCompiler.h"
#include "pulse/Error.h"

namespace pulse::test {

const char *verdict_name(Verdict v) {
    switch (v) {
    case Verdict::Accept: return "accept";
    case Verdict::CrossesInstances: return "crosses array instances";
    case Verdict::Processor: return "processor availability";
    case Verdict::Data: return "data availability";
    }
    return "?";
}

namespace {

/// Calls `f(point)` for every point of the box of `loops` (indices into program.loops).
template<typename F>
void for_each_point(const ir::UreProgram &program, std::vector<int64_t> &point, F f, size_t level = 0) {
    if (level == program.loops.size()) {
        f(point);
        return;
    }
    const ir::Loop &loop = program.loops[level];
    for (int64_t v = loop.min; v <= loop.max(); v++) {
        point[level] = v;
        for_each_point(program, point, f, level + 1);
    }
}

bool in_domain(const ir::UreProgram &program, const std::vector<int64_t> &point) {
    for (size_t i = 0; i < point.size(); i++) {
        if (point[i] < program.loops[i].min || point[i] > program.loops[i].max()) return false;
    }
    return true;
}

}  // namespace

BruteResult brute_force(const ir::UreProgram &program) {
    const ir::SpaceTimeTransform &transform = *program.schedule.transform;
    const size_t n = program.loops.size();
    std::vector<int> source_slots;  // program.loops index of each source loop
    for (const auto &loop : transform.source_loops) source_slots.push_back(program.loop_index(loop));
    auto row_dot = [&](const std::vector<int64_t> &row, const std::vector<int64_t> &v) {
        int64_t sum = 0;
        for (size_t j = 0; j < row.size(); j++) sum += row[j] * v[source_slots[j]];
        return sum;
    };

    ExprCompilerHooks hooks;
    hooks.variable_slot = [&](const std::string &name) {
        int slot = program.loop_index(name);
        if (slot < 0) throw std::logic_error("condition reads an unknown variable " + name);
        return slot;
    };
    hooks.recurrence_call = [](const Halide::Internal::Call *, std::vector<Closure>) -> Closure {
        throw std::logic_error("a dependence condition calls a recurrence");
    };
    hooks.input_call = [](const Halide::Internal::Call *, std::vector<Closure>) -> Closure {
        throw std::logic_error("a dependence condition reads an input");
    };

    // The domain: the box less what the constraints (`where`) exclude.
    const Closure constraints = program.constraints.empty() ? Closure() : compile_expr(program.domain_condition(), hooks);
    auto inside = [&](std::vector<int64_t> &x) {
        if (!in_domain(program, x)) return false;
        if (!constraints) return true;
        EvalState state;
        state.coords = x.data();
        return constraints(state) != 0;
    };

    BruteResult result;
    std::vector<int64_t> point(n), source(n);
    for (const ir::Dependence &dep : program.dependences) {
        BruteDependence bd;
        bd.dp = row_dot(transform.matrix[0], dep.distance);
        bd.dt = row_dot(transform.matrix.back(), dep.distance);
        Closure condition = compile_expr(dep.condition.defined() ? dep.condition : Halide::Internal::const_true(), hooks);
        for_each_point(program, point, [&](const std::vector<int64_t> &x) {
            if (bd.taken || !inside(point)) return;
            for (size_t i = 0; i < n; i++) source[i] = x[i] - dep.distance[i];
            if (!inside(source)) return;
            EvalState state;
            state.coords = x.data();
            if (condition(state) != 0) bd.taken = true;
        });
        result.dependences.push_back(bd);
    }

    for (size_t k = 0; k < program.dependences.size(); k++) {
        const ir::Dependence &dep = program.dependences[k];
        for (size_t i = 0; i < n; i++) {
            bool is_source = std::find(source_slots.begin(), source_slots.end(), (int)i) != source_slots.end();
            if (!is_source && dep.distance[i] != 0) {
                result.verdict = Verdict::CrossesInstances;
                result.culprit = &dep;
                return result;
            }
        }
    }

    // Injectivity: hash the images of the source loops' domain.
    std::set<std::vector<int64_t>> images;
    bool collision = false;
    for_each_point(program, point, [&](const std::vector<int64_t> &x) {
        if (!inside(point)) return;
        // Points that differ only in instance loops are different arrays: fix them at their minimum.
        for (size_t i = 0; i < n; i++) {
            bool is_source = std::find(source_slots.begin(), source_slots.end(), (int)i) != source_slots.end();
            if (!is_source && x[i] != program.loops[i].min) return;
        }
        std::vector<int64_t> image;
        for (const auto &row : transform.matrix) image.push_back(row_dot(row, x));
        if (!images.insert(image).second) collision = true;
    });
    if (collision) {
        result.verdict = Verdict::Processor;
        return result;
    }

    for (size_t k = 0; k < program.dependences.size(); k++) {
        const ir::Dependence &dep = program.dependences[k];
        const BruteDependence &bd = result.dependences[k];
        bool zero = std::all_of(dep.distance.begin(), dep.distance.end(), [](int64_t v) { return v == 0; });
        if (!bd.taken || zero) continue;
        // A 2-D array on (lanes, register slots) runs a lane's slots in
        // ascending order within a step: a read of a lower slot of its lane
        // (no move along the first row, a positive one along the second) in
        // the same step is available.
        const bool lower_slot = transform.matrix.size() == 3 && program.schedule.gpu_threads.empty() && bd.dp == 0 &&
                                row_dot(transform.matrix[1], dep.distance) > 0;
        if (bd.dt == 0 && lower_slot) continue;
        if (bd.dt < (dep.is_copy ? 0 : 1)) {
            result.verdict = Verdict::Data;
            result.culprit = &dep;
            return result;
        }
    }
    return result;
}


ValidatorResult run_validator(const ir::UreProgram &program) {
    // The validator's verdict as data: no message text is read.
    const TransformCheck check = check_transform(program);
    ValidatorResult r;
    r.timings = check.timings;
    r.message = check.verdict.message;
    r.dependence = check.verdict.dependence;
    switch (check.verdict.kind) {
    case VerdictKind::Valid: break;
    case VerdictKind::CrossesInstances: r.verdict = Verdict::CrossesInstances; break;
    case VerdictKind::ProcessorAvailability: r.verdict = Verdict::Processor; break;
    case VerdictKind::DataAvailability: r.verdict = Verdict::Data; break;
    case VerdictKind::Shape: throw std::logic_error("unexpected validator error: " + r.message);
    }
    return r;
}

std::string compare_with_brute_force(const ir::UreProgram &program, const BruteResult &brute, const ValidatorResult &validator) {
    std::ostringstream why;
    if (validator.verdict != brute.verdict) {
        why << "brute force says " << verdict_name(brute.verdict) << ", the validator says "
            << verdict_name(validator.verdict) << " " << validator.message;
    } else if (brute.culprit) {
        // Both reject: the validator names the same dependence.
        const std::string named = "dependence " + brute.culprit->consumer + " <- " + brute.culprit->call_text;
        const ir::Dependence *d = validator.dependence;
        if (!d || d->consumer != brute.culprit->consumer || d->call_text != brute.culprit->call_text) {
            why << "both reject for " << verdict_name(brute.verdict) << ", brute force for " << named
                << ", the validator: " << validator.message;
        }
    } else if (validator.verdict == Verdict::Accept) {
        for (size_t k = 0; k < validator.timings.size(); k++) {
            const DependenceTiming &v = validator.timings[k];
            const BruteDependence &b = brute.dependences[k];
            if (v.taken != b.taken || v.dp != b.dp || v.dt != b.dt) {
                why << "dependence " << program.dependences[k].consumer << " <- " << program.dependences[k].call_text
                    << ": brute force says taken " << b.taken << ", dp " << b.dp << ", dt " << b.dt
                    << "; the validator taken " << v.taken << ", dp " << v.dp << ", dt " << v.dt;
                break;
            }
        }
    }
    return why.str();
}

}  // namespace pulse::test
