#include "ir/IndexArithmetic.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

IndexArithmetic::IndexArithmetic(const Stmt &body) {
    // A let is a value if its own value is not index arithmetic; lets read
    // only earlier lets, so repeating until nothing changes settles them.
    class Collect : public IRVisitor {
    public:
        explicit Collect(IndexArithmetic &a) : a(a) {}
        IndexArithmetic &a;
        bool changed = false;
        using IRVisitor::visit;
        void visit(const LetStmt *op) override {
            if (!a.value_names.count(op->name) && a.holds_value(op->value)) changed |= a.value_names.insert(op->name).second;
            IRVisitor::visit(op);
        }
        void visit(const Let *op) override {
            if (!a.value_names.count(op->name) && a.holds_value(op->value)) changed |= a.value_names.insert(op->name).second;
            IRVisitor::visit(op);
        }
    };
    bool changed = body.defined();
    while (changed) {
        Collect collect(*this);
        body.accept(&collect);
        changed = collect.changed;
    }
}

namespace {

/// What an expression reads: values, and variables at all.
class Reads : public IRVisitor {
public:
    explicit Reads(const std::set<std::string> &value_names) : value_names(value_names) {}
    const std::set<std::string> &value_names;
    bool value = false, variable = false;
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        value |= value_names.count(op->name) > 0;
        variable = true;
    }
    void visit(const Load *) override { value = true; }
    void visit(const Call *) override { value = true; }
    void visit(const Cast *op) override {
        // A float converted to an integer is a computed value.
        value |= !op->value.type().is_int_or_uint();
        IRVisitor::visit(op);
    }
};

}  // namespace

IndexArithmetic IndexArithmetic::none() {
    IndexArithmetic a{Stmt()};
    a.all_values = true;
    return a;
}

bool IndexArithmetic::holds_value(const Expr &e) const { return e.type().is_float() || reads_values(e); }

bool IndexArithmetic::reads_values(const Expr &e) const {
    if (all_values) return true;
    Reads reads(value_names);
    e.accept(&reads);
    return reads.value;
}

bool IndexArithmetic::is_index(const Expr &e) const {
    if (all_values || !e.type().is_int_or_uint() || e.type().is_bool()) return false;
    Reads reads(value_names);
    e.accept(&reads);
    // Constants alone are left to the language's arithmetic (they may overflow).
    return reads.variable && !reads.value;
}

}  // namespace pulse
