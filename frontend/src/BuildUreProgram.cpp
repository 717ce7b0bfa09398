// Func::lower: turns the language's handles into the compiler's URE program,
// checking what can only be checked once the whole spec is known (every
// merged Func defined, every loop bounded, every call resolvable), then runs
// the front of the pass list (Pipeline.h).
#include <algorithm>
#include <set>

#include "FuncContents.h"
#include "lower/Pipeline.h"

namespace pulse {

using internal::FuncContents;
using internal::UreGroup;
using namespace Halide::Internal;

namespace {

std::string join_names(const std::vector<std::string> &names) {
    std::string s;
    for (size_t i = 0; i < names.size(); i++) s += (i ? ", " : "") + names[i];
    return s;
}

/// Collects the inputs, recurrence callees and free variables of a definition.
class CollectUses : public IRVisitor {
public:
    std::map<std::string, ir::InputDecl> inputs;
    std::vector<std::string> callees;
    std::set<std::string> variables;

protected:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (op->call_type == Call::Image) {
            ir::InputDecl decl{op->name, op->type, (int)op->args.size()};
            auto it = inputs.find(op->name);
            if (it != inputs.end() && (it->second.type != decl.type || it->second.dimensions != decl.dimensions)) {
                compile_error("two different inputs are named ", op->name);
            }
            inputs[op->name] = decl;
        }
        std::string callee = ir::recurrence_callee(op);
        if (!callee.empty()) callees.push_back(callee);
        IRVisitor::visit(op);
    }
    void visit(const Variable *op) override { variables.insert(op->name); }
};

}  // namespace

ir::UreProgram Func::lower() const {
    const UreGroup &g = *func->group;
    const FuncContents &owner = *g.funcs[0];
    ir::UreProgram p;
    p.name = owner.name;
    if (!owner.declared) {
        // An output owns a nest only alone (Func::merge_ures refuses it as
        // owner): it was left out of the merge_ures call.
        CollectUses uses;
        owner.value.accept(&uses);
        std::set<std::string> callees(uses.callees.begin(), uses.callees.end());
        std::string reads;
        for (const std::string &c : callees) reads += (reads.empty() ? "" : ", ") + c;
        compile_error("output ", owner.name, " is not merged into a loop nest", reads.empty() ? "" : " (it reads " + reads + ")",
                      ": add it to the merge_ures call of the nest that computes it, after the Funcs it reads, e.g. ",
                      "X.merge_ures(W, Z, ", owner.name, ")");
    }
    // Loops: the owner's arguments, each bounded.
    for (const std::string &v : owner.args) {
        auto it = std::find_if(g.bounds.begin(), g.bounds.end(), [&](const auto &b) { return b.first == v; });
        if (it == g.bounds.end()) {
            compile_error("missing bound for loop '", v, "' of ", owner.name, ": add ", owner.name, ".set_bounds(", v,
                          ", min, extent)");
        }
        p.loops.push_back(ir::Loop{v, it->second.first, it->second.second});
    }
    std::set<std::string> names;
    std::map<std::string, ir::InputDecl> inputs;
    for (const auto &f : g.funcs) {
        if (!f->value.defined()) {
            compile_error("Func ", f->name, " is merged into the loop nest of ", owner.name, " but never defined");
        }
        if (f->declared && f->args != owner.args) {
            compile_error("Func ", f->name, "(", join_names(f->args), ") is merged into ", owner.name, "(",
                          join_names(owner.args), "): merged UREs must have the same arguments in the same order");
        }
        for (const std::string &a : f->args) {
            if (std::find(owner.args.begin(), owner.args.end(), a) == owner.args.end()) {
                compile_error("output ", f->name, "(", join_names(f->args), "): '", a, "' is not a loop of ", owner.name,
                              "(", join_names(owner.args), ")");
            }
        }
        names.insert(f->name);
        ir::Ure u;
        u.name = f->name;
        u.type = f->type;
        u.args = f->args;
        u.value = f->value;
        u.is_output = !f->declared;
        u.index = f->index;
        u.place = f->place;
        p.ures.push_back(u);
    }
    for (const auto &f : g.funcs) {
        CollectUses uses;
        f->value.accept(&uses);
        for (const std::string &v : uses.variables) {
            if (std::find(owner.args.begin(), owner.args.end(), v) == owner.args.end()) {
                compile_error("definition of ", f->name, " uses variable '", v, "', which is not a loop of ", owner.name,
                              "(", join_names(owner.args), ")");
            }
        }
        for (const std::string &c : uses.callees) {
            if (!names.count(c)) {
                compile_error(f->name, " calls ", c, ", which is not merged into the loop nest of ", owner.name, ": add it to ",
                              owner.name, ".merge_ures(...)");
            }
            const ir::Ure &callee = p.ure(c);
            if (callee.is_output) {
                compile_error(f->name, " calls the output ", c, "; outputs are stored, not read by UREs");
            }
        }
        for (const auto &in : uses.inputs) {
            if (names.count(in.first)) compile_error("input ", in.first, " has the same name as a Func");
            auto it = inputs.find(in.first);
            if (it != inputs.end() && (it->second.type != in.second.type || it->second.dimensions != in.second.dimensions)) {
                compile_error("two different inputs are named ", in.first);
            }
            inputs[in.first] = in.second;
        }
    }
    for (const auto &in : inputs) p.inputs.push_back(in.second);
    p.schedule = g.schedule;
    run_front_passes(p);
    return p;
}

}  // namespace pulse
