#include "lower/PeelLoops.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Replaces each integer or boolean expression of `var` alone (no other
/// variable, no load or call) that takes one value on every iteration of
/// [lo, hi] by that value. The simplifier folds what it can prove from the
/// loop's range; a rolled time loop's decode of its points (divisions and
/// selects of the block index against constants) is often beyond it though
/// constant on the few blocks of the middle loop.
class FoldOverRange : public IRMutator {
public:
    FoldOverRange(const std::string &var, int64_t lo, int64_t hi) : var(var), lo(lo), hi(hi) {}
    using IRMutator::mutate;

    Expr mutate(const Expr &e) override {
        if (e.defined() && e.type().is_scalar() && (e.type().is_bool() || e.type().is_int()) && !is_const(e) &&
            !e.as<Variable>() && only_of_var(e)) {
            Expr value;
            for (int64_t v = lo; v <= hi; v++) {
                Expr at = simplify_exact(substitute(var, make_const(Int(32), v), e));
                if (!is_const(at) || (value.defined() && !equal(at, value))) {
                    value = Expr();
                    break;
                }
                value = at;
            }
            if (value.defined()) return value;
        }
        return IRMutator::mutate(e);
    }

private:
    std::string var;
    int64_t lo, hi;

    bool only_of_var(const Expr &e) const {
        class Free : public IRVisitor {
        public:
            const std::string &var;
            bool uses_var = false, other = false;
            explicit Free(const std::string &v) : var(v) {}
            using IRVisitor::visit;
            void visit(const Variable *op) override { (op->name == var ? uses_var : other) = true; }
            void visit(const Call *) override { other = true; }
            void visit(const Load *) override { other = true; }
            void visit(const Let *) override { other = true; }
        } free(var);
        e.accept(&free);
        return free.uses_var && !free.other;
    }
};

/// The most iterations FoldOverRange evaluates an expression on.
constexpr int64_t kMaxFoldedIterations = 256;

class Peel : public IRMutator {
public:
    using IRMutator::visit;

    Stmt visit(const ProducerConsumer *op) override {
        if (op->name != kir::array_instance_marker) return IRMutator::visit(op);
        bool outer = inside;
        inside = true;
        Stmt s = IRMutator::visit(op);
        inside = outer;
        return s;
    }

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        const int64_t *lo = as_const_int(op->min), *n = as_const_int(op->extent);
        if (!inside || !lo || !n || *n < 3) {
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        }
        Expr first = make_const(op->min.type(), *lo), last = make_const(op->min.type(), *lo + *n - 1);
        Stmt middle_body = body;
        if (*n - 2 <= kMaxFoldedIterations) middle_body = FoldOverRange(op->name, *lo + 1, *lo + *n - 2).mutate(body);
        Stmt middle = For::make(op->name, make_const(op->min.type(), *lo + 1), make_const(op->extent.type(), *n - 2), op->for_type,
                                op->device_api, middle_body);
        return Block::make({substitute(op->name, first, body), middle, substitute(op->name, last, body)});
    }

private:
    bool inside = false;
};

}  // namespace

void peel_loops(kir::Kernel &kernel) { kernel.body = Peel().mutate(kernel.body); }

}  // namespace pulse
