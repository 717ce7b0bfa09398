#include "analysis/CheckWellDefined.h"

#include <isl/constraint.h>
#include <isl/map.h>
#include <isl/set.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "ir/Affine.h"
#include "analysis/IslModel.h"

namespace pulse {

namespace {

std::string point_text(const ir::UreProgram &program, const std::vector<int64_t> &x) {
    std::ostringstream s;
    s << "(";
    for (size_t i = 0; i < x.size(); i++) s << (i ? ", " : "") << program.loops[i].var << " = " << x[i];
    s << ")";
    return s.str();
}

}  // namespace

void check_well_defined(const ir::UreProgram &program) {
    try {
        isl_model::Context context;
        std::vector<std::string> loops;
        for (const ir::Loop &l : program.loops) loops.push_back(l.var);
        const isl::set domain = isl_model::iteration_domain(context, program, loops);
        // Where each URE's value is defined (exactly, or not judged).
        std::map<std::string, isl_model::ConditionSet> defined;
        for (const ir::Ure &u : program.ures) defined[u.name] = isl_model::condition_set(ir::defined_condition(u.value), domain);

        for (const ir::Dependence &dep : program.dependences) {
            isl_model::ConditionSet reads = isl_model::condition_set(dep.condition, domain);
            const isl_model::ConditionSet &producer = defined.at(dep.producer);
            if (!reads.exact || !producer.exact) continue;
            isl::set sources = reads.set.apply(isl_model::shift_map(domain, dep.distance));
            isl::set bad = sources.subtract(domain.intersect(producer.set));
            if (bad.is_empty()) continue;
            std::vector<int64_t> at = isl_model::coordinates(bad.sample_point());
            std::vector<int64_t> reader = at;
            for (size_t i = 0; i < reader.size(); i++) reader[i] += dep.distance[i];
            isl::set at_set = isl::manage(isl_set_from_point(bad.sample_point().release()));
            const bool inside = !domain.intersect(at_set).is_empty();
            refuse(Refusal::NotWellDefined, dep.consumer, program.name, " is not well defined: ", dep.consumer, " reads ", dep.call_text, " at ",
                          point_text(program, reader), ", which reads ", dep.producer, " at ", point_text(program, at),
                          inside ? ", where " + dep.producer + " is undefined (a select there has no value)"
                                 : ", outside the domain (is there a base case?)",
                          ": guard the read with a select on the loop bounds, or give ", dep.producer,
                          " a value there");
        }

        for (const ir::Ure *u : program.outputs()) {
            const isl_model::ConditionSet &written = defined.at(u->name);
            // A reduction's element is written once, by its instance, whether
            // or not any point contributes to it (then it keeps its initial
            // value): every point of the domain maps to one.
            if (!written.exact && !u->reduction) continue;
            const isl::set &writers = u->reduction ? domain : written.set;
            std::vector<Halide::Expr> index = u->output_index();
            isl_map *map = nullptr;
            bool affine = true;
            for (const Halide::Expr &e : index) {
                std::optional<isl::pw_aff> f = isl_model::affine_expr(e, domain);
                if (!f) {
                    affine = false;
                    break;
                }
                isl_map *dim = isl_map_from_pw_aff(f->copy());
                map = map ? isl_map_flat_range_product(map, dim) : dim;
            }
            if (!affine || !map) {
                if (map) isl_map_free(map);
                continue;
            }
            isl::map writes = isl::manage(isl_map_intersect_domain(map, writers.copy()));
            isl::map twice = u->reduction ? isl::map() : isl_model::collisions(writes);
            if (!u->reduction && !twice.is_empty()) {
                auto [x, y] = isl_model::first_collision(twice);
                refuse(Refusal::NotWellDefined, u->name, program.name, " is not well defined: output ", u->name, " is written twice, at ",
                              point_text(program, x), " and at ", point_text(program, y),
                              ": restrict its select so that one point writes each element");
            }
            // The output's box: per dimension, the bounds of its index over the
            // loops it is written over (narrowed by its select's bounds).
            const std::vector<ir::Loop> box_loops = program.output_loops(*u);
            isl::set range = writes.range();
            isl_set *box = isl_set_universe(isl_set_get_space(range.get()));
            for (size_t d = 0; d < index.size(); d++) {
                std::optional<AffineForm> f = to_affine(index[d], program.loops);
                if (!f) return;
                int64_t lo = f->constant, hi = f->constant;
                for (size_t i = 0; i < box_loops.size(); i++) {
                    int64_t a = f->coefficient[i] * box_loops[i].min, b = f->coefficient[i] * box_loops[i].max();
                    lo += std::min(a, b), hi += std::max(a, b);
                }
                isl_local_space *ls = isl_local_space_from_space(isl_set_get_space(range.get()));
                isl_constraint *lower = isl_constraint_alloc_inequality(isl_local_space_copy(ls));
                lower = isl_constraint_set_coefficient_si(lower, isl_dim_set, (int)d, 1);
                lower = isl_constraint_set_constant_val(lower, isl_val_int_from_si(context.ctx().get(), -lo));
                isl_constraint *upper = isl_constraint_alloc_inequality(ls);
                upper = isl_constraint_set_coefficient_si(upper, isl_dim_set, (int)d, -1);
                upper = isl_constraint_set_constant_val(upper, isl_val_int_from_si(context.ctx().get(), hi));
                box = isl_set_add_constraint(isl_set_add_constraint(box, lower), upper);
            }
            isl::set never = isl::manage(box).subtract(range);
            if (!never.is_empty()) {
                std::vector<int64_t> element = isl_model::coordinates(never.sample_point());
                std::ostringstream at;
                for (size_t i = 0; i < element.size(); i++) at << (i ? ", " : "") << element[i];
                refuse(Refusal::NotWellDefined, u->name, program.name, " is not well defined: element ", u->name, "(", at.str(),
                              u->reduction ? ") of its box is never written (no point of the domain maps there): index it so that every element is written"
                                           : ") of its box is never written (no point of the domain where " + u->name +
                                                 " is defined maps there): widen its select, or index it so that every element is written");
            }
        }
    } catch (const isl::exception &e) {
        internal_error("while checking that ", program.name, " is well defined with isl: ", e.what());
    }
}

}  // namespace pulse
