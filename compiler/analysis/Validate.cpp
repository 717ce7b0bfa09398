#include "analysis/Validate.h"

#include <algorithm>
#include <sstream>

#include "analysis/IslModel.h"

namespace pulse {

namespace {

/// "(0, 1, -1)"
std::string tuple_text(const std::vector<int64_t> &values) {
    std::ostringstream out;
    out << "(";
    for (size_t i = 0; i < values.size(); i++) out << (i ? ", " : "") << values[i];
    out << ")";
    return out.str();
}

/// "(c, q)"
std::string names_text(const std::vector<std::string> &names) {
    std::ostringstream out;
    out << "(";
    for (size_t i = 0; i < names.size(); i++) out << (i ? ", " : "") << names[i];
    out << ")";
    return out.str();
}

/// "(c = 0, q = 1)"
std::string point_text(const std::vector<std::string> &names, const std::vector<int64_t> &coords) {
    std::ostringstream out;
    out << "(";
    for (size_t i = 0; i < names.size(); i++) out << (i ? ", " : "") << names[i] << " = " << coords[i];
    out << ")";
    return out.str();
}

/// "c in [0, 16), q in [0, 5), b in [0, 4)": every loop of the nest, innermost first.
std::string bounds_text(const ir::UreProgram &program) {
    std::ostringstream out;
    for (size_t i = 0; i < program.loops.size(); i++) {
        const ir::Loop &loop = program.loops[i];
        out << (i ? ", " : "") << loop.var << " in [" << loop.min << ", " << loop.min + loop.extent << ")";
    }
    for (const Halide::Expr &c : program.constraints) out << ", where " << ir::to_source(c);
    return out.str();
}

/// "space row (1, 1), time row (0, 1)"
std::string matrix_text(const ir::SpaceTimeTransform &transform) {
    std::ostringstream out;
    const size_t rows = transform.matrix.size();
    for (size_t r = 0; r < rows; r++) {
        out << (r ? ", " : "") << (r + 1 == rows ? "time row " : "space row ") << tuple_text(transform.matrix[r]);
    }
    return out.str();
}

int64_t dot(const std::vector<int64_t> &row, const std::vector<int64_t> &d) {
    int64_t sum = 0;
    for (size_t i = 0; i < row.size(); i++) sum += row[i] * d[i];
    return sum;
}

/// Name of destination row r ("s", "t", ...), for messages.
std::string destination_name(const ir::SpaceTimeTransform &transform, size_t r) {
    if (r < transform.destination_loops.size()) return transform.destination_loops[r];
    return r + 1 == transform.matrix.size() ? "t" : "s" + std::to_string(r);
}

/// The transform's source loops are distinct loops of the nest and the matrix
/// has one column per source loop, at least one space row and a time row.
void check_shape(const ir::UreProgram &program, const ir::SpaceTimeTransform &transform) {
    const auto &src = transform.source_loops;
    if (src.empty()) compile_error("space-time transform of ", program.name, " has no source loops");
    for (size_t i = 0; i < src.size(); i++) {
        if (program.loop_index(src[i]) < 0) {
            compile_error("space-time transform of ", program.name, ": source loop '", src[i],
                          "' is not a loop of the nest (loops: ", bounds_text(program), ")");
        }
        if (std::find(src.begin(), src.begin() + i, src[i]) != src.begin() + i) {
            compile_error("space-time transform of ", program.name, ": source loop '", src[i], "' is listed twice");
        }
    }
    if (transform.matrix.size() < 2) {
        compile_error("space-time transform of ", program.name, " has ", transform.matrix.size(),
                      " matrix row(s); it needs at least one space row and the time row (last)");
    }
    if (!transform.destination_loops.empty() && transform.destination_loops.size() != transform.matrix.size()) {
        compile_error("space-time transform of ", program.name, " has ", transform.destination_loops.size(),
                      " destination loops but ", transform.matrix.size(), " matrix rows");
    }
    for (const auto &row : transform.matrix) {
        if (row.size() != src.size()) {
            compile_error("space-time transform of ", program.name, ": matrix row ", tuple_text(row), " has ",
                          row.size(), " entries but there are ", src.size(), " source loops ", names_text(src));
        }
    }
}

/// One dependence, as the validator sees it.
struct DependenceModel {
    std::vector<int64_t> source_distance;  ///< d restricted to the source loops, in their order
    std::vector<int64_t> dp;               ///< P d, one entry per space row
    bool exact = true;                     ///< its condition was converted exactly
};

/// "dependence Z <- Z(c, q - 1)"
std::string dependence_text(const ir::Dependence &dep) { return "dependence " + dep.consumer + " <- " + dep.call_text; }

std::string dp_text(const std::vector<int64_t> &dp) {
    return dp.size() == 1 ? std::to_string(dp[0]) : tuple_text(dp);
}

/// A dependence whose condition could not be modelled exactly is assumed taken
/// wherever its source is in the domain; say so, since that may be why it is checked.
std::string approximation_note(const DependenceModel &model) {
    return model.exact ? "" : " (its condition is not affine, so it is assumed taken wherever its source is in the domain)";
}

}  // namespace

const char *to_string(VerdictKind kind) {
    switch (kind) {
    case VerdictKind::Valid: return "valid";
    case VerdictKind::Shape: return "shape";
    case VerdictKind::CrossesInstances: return "crosses instances";
    case VerdictKind::ProcessorAvailability: return "processor availability";
    case VerdictKind::DataAvailability: return "data availability";
    }
    return "?";
}

struct TransformChecker::Model {
    const ir::UreProgram *program = nullptr;
    std::vector<std::string> src;
    std::string bounds;
    // Declared before the isl objects, so it is destroyed after them.
    isl_model::Context context;
    isl::set source_domain;
    std::vector<std::vector<int64_t>> source_distance;  ///< per dependence, over src
    std::vector<bool> taken, exact;
};

TransformChecker::TransformChecker(const ir::UreProgram &program, std::vector<std::string> source_loops)
    : model(std::make_unique<Model>()) {
    Model &m = *model;
    m.program = &program;
    if (source_loops.empty()) {
        if (!program.schedule.transform) {
            compile_error(program.name, " has no space-time transform: add ", program.name,
                          ".space_time_transform(source loops, destination loops, matrix)");
        }
        source_loops = program.schedule.transform->source_loops;
    }
    m.src = source_loops;
    m.bounds = bounds_text(program);
    std::vector<std::string> all_loops;
    for (const auto &loop : program.loops) all_loops.push_back(loop.var);
    try {
        const isl::set full_domain = isl_model::iteration_domain(m.context, program, all_loops);
        bool known = std::all_of(m.src.begin(), m.src.end(), [&](const std::string &v) { return program.loop_index(v) >= 0; });
        if (known) m.source_domain = isl_model::iteration_domain(m.context, program, m.src);
        for (const ir::Dependence &dep : program.dependences) {
            std::vector<int64_t> d;
            for (const auto &loop : m.src) d.push_back(known ? dep.distance[program.loop_index(loop)] : 0);
            bool exact = true;
            isl::map relation = isl_model::dependence_relation(program, dep, full_domain, &exact);
            m.source_distance.push_back(d);
            m.taken.push_back(isl_map_is_empty(relation.get()) == isl_bool_false);
            m.exact.push_back(exact);
        }
    } catch (const isl::exception &e) {
        internal_error("while modelling ", program.name, " with isl: ", e.what());
    }
}

TransformChecker::~TransformChecker() = default;

TransformCheck TransformChecker::check(const ir::SpaceTimeTransform &transform, CollisionMemo *memo) const {
    const Model &m = *model;
    const ir::UreProgram &program = *m.program;
    TransformCheck result;
    TransformVerdict &verdict = result.verdict;
    auto fail = [&](VerdictKind kind, const auto &...args) {
        verdict.kind = kind;
        verdict.message = detail::str(args...);
        return result;
    };
    try {
        check_shape(program, transform);
    } catch (const CompileError &e) {
        return fail(VerdictKind::Shape, e.what());
    }
    if (transform.source_loops != m.src) {
        return fail(VerdictKind::Shape, "space-time transform of ", program.name, ": source loops ",
                    names_text(transform.source_loops), " are not the loops ", names_text(m.src),
                    " this checker modelled");
    }
    const std::vector<std::string> &src = m.src;
    const size_t space_rows = transform.matrix.size() - 1;
    const std::vector<int64_t> &time_row = transform.matrix.back();
    const std::string &bounds = m.bounds;
    const std::string matrix = matrix_text(transform);

    // What the transform makes of every dependence's distance.
    std::vector<DependenceModel> models;
    for (size_t k = 0; k < program.dependences.size(); k++) {
        DependenceModel dm;
        dm.source_distance = m.source_distance[k];
        dm.exact = m.exact[k];
        for (size_t r = 0; r < space_rows; r++) dm.dp.push_back(dot(transform.matrix[r], dm.source_distance));
        DependenceTiming timing;
        timing.dependence = &program.dependences[k];
        timing.dp = dm.dp[0];
        timing.dt = dot(time_row, dm.source_distance);
        timing.taken = m.taken[k];
        result.timings.push_back(timing);
        models.push_back(dm);
    }
    const std::vector<DependenceTiming> &timings = result.timings;

    // A loop outside the transform's source loops enumerates independent
    // array instances (GPU blocks, an outer sequential loop): no value can
    // travel between them inside the array. This is checked for every
    // dependence, taken or not: the program is structurally one that
    // reads across arrays, whatever the bounds of this build. With
    // gpu_grid_sync the instances of the gpu_blocks loops wait for each
    // other after every step, so a value may cross them along those loops
    // a step or more after it is computed.
    const ir::Schedule &schedule = program.schedule;
    for (size_t k = 0; k < timings.size(); k++) {
        const ir::Dependence &dep = *timings[k].dependence;
        for (size_t i = 0; i < program.loops.size(); i++) {
            const std::string &loop = program.loops[i].var;
            if (dep.distance[i] == 0 || std::find(src.begin(), src.end(), loop) != src.end()) continue;
            verdict.dependence = &dep;
            // A gpu_blocks loop of its own: one that no tile splits (a tile may reuse its name for a piece).
            const bool tiled = std::any_of(schedule.tiles.begin(), schedule.tiles.end(), [&](const ir::Tile &t) { return t.var == loop; });
            const bool block_loop =
                !tiled && std::find(schedule.gpu_blocks.begin(), schedule.gpu_blocks.end(), loop) != schedule.gpu_blocks.end();
            if (schedule.gpu_grid_sync && block_loop) {
                if (timings[k].dt >= 1) continue;
                verdict.dt = timings[k].dt;
                return fail(VerdictKind::CrossesInstances, "invalid space-time transform of ", program.name,
                            " (data availability): ", dependence_text(dep), " of URE ", dep.consumer,
                            " crosses array instances along the gpu_blocks loop '", loop, "' (distance ", dep.distance[i],
                            ") and the transform gives it dt = s·d = ", timings[k].dt,
                            " steps; a value reaches another instance only through the grid barrier after the step "
                            "that computes it: the time row must give this dependence at least one step. Matrix: ",
                            matrix, "; bounds: ", bounds);
            }
            const std::string sync_hint =
                !block_loop ? ", or map '" + loop + "' to the grid with gpu_blocks and synchronise the instances with gpu_grid_sync()"
                : ", or synchronise the instances with " + program.name + ".gpu_grid_sync() (a value then reaches the next instance a step later)";
            return fail(VerdictKind::CrossesInstances, "invalid space-time transform of ", program.name,
                        " (data availability): ", dependence_text(dep), " of URE ", dep.consumer,
                        " crosses array instances: its distance in loop '", loop, "' is ", dep.distance[i],
                        ", which is not a source loop of the transform ", names_text(src),
                        ": each value of '", loop, "' runs its own array, and no value moves between arrays",
                        ". Make '", loop, "' a source loop of the transform or remove the dependence",
                        sync_hint,
                        ". Bounds: ", bounds);
        }
    }

    // Processor availability: no two points on the same PE at the same step.
    // Checked before data availability: a map that is not injective is
    // wrong whatever the dependences, and two colliding points say why.
    std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> collision;
    auto remembered = memo ? memo->find(transform.matrix) : CollisionMemo::iterator();
    if (memo && remembered != memo->end()) {
        collision = remembered->second;
    } else {
        try {
            isl::map forward = isl_model::forward_map(transform, m.source_domain);
            isl::map collide = isl_model::collisions(forward);
            if (isl_map_is_empty(collide.get()) != isl_bool_true) collision = isl_model::first_collision(collide);
        } catch (const isl::exception &e) {
            internal_error("while validating the space-time transform of ", program.name,
                          " with isl: ", e.what());
        }
        if (memo) (*memo)[transform.matrix] = collision;
    }
    if (collision) {
        const auto &[x, y] = *collision;
        std::ostringstream image;
        std::vector<int64_t> diff;
        for (size_t i = 0; i < x.size(); i++) diff.push_back(y[i] - x[i]);
        for (size_t r = 0; r < transform.matrix.size(); r++) {
            image << (r ? (r + 1 == transform.matrix.size() ? " at step " : ", ") : "on PE ")
                  << destination_name(transform, r) << " = " << dot(transform.matrix[r], x);
        }
        verdict.first = x;
        verdict.second = y;
        return fail(VerdictKind::ProcessorAvailability, "invalid space-time transform of ", program.name,
                    " (processor availability): points ", point_text(src, x), " and ", point_text(src, y),
                    " both run ", image.str(), ", so x -> (P x, s x) is not injective on the bounded domain (",
                    bounds, "). Matrix: ", matrix, ". Every row maps their difference ", tuple_text(diff), " over ",
                    names_text(src),
                    " to 0: change a row so that it does not (with more source loops than rows, the time "
                    "row must give each loop a coefficient larger than the span of the loops inside it on "
                    "one PE)");
    }

    // Data availability: a value must be produced no later than it is read.
    const bool rows_on_slots = space_rows == 2 && schedule.gpu_threads.empty();
    auto along_slots = [&](const std::vector<int64_t> &dp) { return rows_on_slots && dp[0] == 0 && dp[1] > 0; };
    for (size_t k = 0; k < timings.size(); k++) {
        const DependenceTiming &timing = timings[k];
        const DependenceModel &dm = models[k];
        const ir::Dependence &dep = *timing.dependence;
        const bool zero = std::all_of(dep.distance.begin(), dep.distance.end(), [](int64_t v) { return v == 0; });
        // d = 0 reads an earlier URE at the same point: same PE, same step.
        if (!timing.taken || zero) continue;
        const int64_t needed = dep.is_copy ? 0 : 1;
        if (timing.dt >= needed) continue;
        // A 2-D array on (lanes, register slots) computes a step's slots of
        // a lane in ascending order: a read of a lower slot of the same lane
        // in the same step (dp = (0, d > 0)) is computed before it.
        if (timing.dt == 0 && along_slots(dm.dp)) continue;
        std::ostringstream why;
        if (dep.is_copy) {
            why << "a copy chain may take zero steps (a broadcast) but not go back in time: the time row must "
                   "not give this dependence a negative number of steps: s·d >= 0";
        } else if (timing.dt == 0) {
            why << "the value would be read in the step that computes it; dt = 0 (a broadcast) is allowed only "
                   "for a pure copy V(x) = V(x - d), or, on a 2-D array whose second row runs on each lane's "
                   "register slots (no gpu_threads), from a lower slot of the same lane (dp = (0, d), d > 0); the "
                   "time row must give this dependence at least one step: s·d >= 1";
        } else {
            why << "the value would be read " << -timing.dt << " step(s) before it is computed: the time row "
                << "must give this dependence at least one step: s·d >= 1";
        }
        verdict.dependence = &dep;
        verdict.dp = timing.dp;
        verdict.dt = timing.dt;
        return fail(VerdictKind::DataAvailability, "invalid space-time transform of ", program.name,
                    " (data availability): ", dependence_text(dep), " of URE ", dep.consumer, " has distance d = ",
                    tuple_text(dm.source_distance), " over ", names_text(src), approximation_note(dm),
                    "; the transform gives it dp = P·d = ", dp_text(dm.dp), " and dt = s·d = ", timing.dt, ": ",
                    why.str(), ". Matrix: ", matrix, "; bounds: ", bounds);
    }
    return result;
}

TransformCheck check_transform(const ir::UreProgram &program) {
    if (!program.schedule.transform) {
        compile_error(program.name, " has no space-time transform: add ", program.name,
                      ".space_time_transform(source loops, destination loops, matrix)");
    }
    const ir::SpaceTimeTransform &transform = *program.schedule.transform;
    // The shape is checked first: the model needs distinct, known source loops.
    check_shape(program, transform);
    return TransformChecker(program).check(transform);
}

std::vector<DependenceTiming> validate_transform(const ir::UreProgram &program) {
    TransformCheck checked = check_transform(program);
    if (!checked.verdict.valid()) {
        const TransformVerdict &v = checked.verdict;
        refuse(v.kind == VerdictKind::Shape ? Refusal::Misuse : Refusal::InvalidTransform,
               v.dependence ? v.dependence->consumer : std::string(), v.message);
    }
    return checked.timings;
}

}  // namespace pulse
