#include "exec/ExprCompiler.h"

#include <cmath>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// An operand of signed integer type of `width` bits, as its exact value.
int64_t signed_operand(const Scalar &v, int width) { return wrap_signed(v.as_uint(), width); }
/// An operand of unsigned integer type of `width` bits, as its exact value.
uint64_t unsigned_operand(const Scalar &v, int width) { return v.as_uint() & width_mask(width); }

}  // namespace

double round_to_type(double v, Type t) { return Scalar::normalize(Scalar(v), t).as_double(); }

namespace {

class Compiler {
public:
    explicit Compiler(const ExprCompilerHooks &h) : hooks(h) {}

    Closure compile(const Expr &e) {
        const Type t = e.type();
        if (!is_supported_type(t)) require_supported_type(t, "expression '" + ir::to_source(e) + "'");
        if (const IntImm *op = e.as<IntImm>()) return constant(Scalar::normalize(Scalar::of_int(op->value), t));
        if (const UIntImm *op = e.as<UIntImm>()) return constant(Scalar::normalize(Scalar::of_uint(op->value), t));
        if (const FloatImm *op = e.as<FloatImm>()) {
            return constant(t.bits() == 32 ? Scalar::of_float((float)op->value) : Scalar::of_double(op->value));
        }
        if (const Variable *op = e.as<Variable>()) {
            int slot = hooks.variable_slot(op->name);
            return [slot](EvalState &s) { return Scalar::of_int(s.coords[slot]); };
        }
        if (const Cast *op = e.as<Cast>()) {
            Closure v = compile(op->value);
            const Type from = op->value.type();
            return [v, from, t](EvalState &s) { return Scalar::cast(v(s), from, t); };
        }
        if (const Add *op = e.as<Add>()) return arithmetic(op->a, op->b, t, BinaryOp::Add);
        if (const Sub *op = e.as<Sub>()) return arithmetic(op->a, op->b, t, BinaryOp::Sub);
        if (const Mul *op = e.as<Mul>()) return arithmetic(op->a, op->b, t, BinaryOp::Mul);
        if (const Div *op = e.as<Div>()) return arithmetic(op->a, op->b, t, BinaryOp::Div);
        if (const Mod *op = e.as<Mod>()) return arithmetic(op->a, op->b, t, BinaryOp::Mod);
        if (const Min *op = e.as<Min>()) return arithmetic(op->a, op->b, t, BinaryOp::Min);
        if (const Max *op = e.as<Max>()) return arithmetic(op->a, op->b, t, BinaryOp::Max);
        if (const EQ *op = e.as<EQ>()) return comparison(op->a, op->b, Compare::EQ);
        if (const NE *op = e.as<NE>()) return comparison(op->a, op->b, Compare::NE);
        if (const LT *op = e.as<LT>()) return comparison(op->a, op->b, Compare::LT);
        if (const LE *op = e.as<LE>()) return comparison(op->a, op->b, Compare::LE);
        if (const GT *op = e.as<GT>()) return comparison(op->a, op->b, Compare::GT);
        if (const GE *op = e.as<GE>()) return comparison(op->a, op->b, Compare::GE);
        if (const And *op = e.as<And>()) {
            Closure a = compile(op->a), b = compile(op->b);
            return [a, b](EvalState &s) { return Scalar::of_bool(a(s).is_true() && b(s).is_true()); };
        }
        if (const Or *op = e.as<Or>()) {
            Closure a = compile(op->a), b = compile(op->b);
            return [a, b](EvalState &s) { return Scalar::of_bool(a(s).is_true() || b(s).is_true()); };
        }
        if (const Not *op = e.as<Not>()) {
            Closure a = compile(op->a);
            return [a](EvalState &s) { return Scalar::of_bool(!a(s).is_true()); };
        }
        if (const Select *op = e.as<Select>()) {
            Closure c = compile(op->condition), a = compile(op->true_value), b = compile(op->false_value);
            return [c, a, b](EvalState &s) { return c(s).is_true() ? a(s) : b(s); };
        }
        if (const Call *op = e.as<Call>()) return call(op);
        compile_error("expression '", ir::to_source(e), "' uses an operation the reference interpreter does not evaluate");
    }

private:
    const ExprCompilerHooks &hooks;

        enum class Compare { EQ, NE, LT, LE, GT, GE };

    static Closure constant(Scalar v) {
        return [v](EvalState &) { return v; };
    }

    /// A binary operation whose operands and result have type `t`, as the
    /// language defines it (binary_fn: pulse/ScalarSemantics.h).
    Closure arithmetic(const Expr &ea, const Expr &eb, Type t, BinaryOp op) {
        Closure a = compile(ea), b = compile(eb);
        if (t.is_bool() && op != BinaryOp::Min && op != BinaryOp::Max) {
            compile_error("arithmetic on bool values is not evaluated: ", ir::to_source(ea), ", ", ir::to_source(eb));
        }
        const BinaryFn fn = binary_fn(op, t);
        return [a, b, fn](EvalState &s) { return fn(a(s), b(s)); };
    }

    /// a == b, a != b, a < b, a <= b, a > b, a >= b, compared exactly at the operands' type.
    Closure comparison(const Expr &ea, const Expr &eb, Compare op) {
        Closure a = compile(ea), b = compile(eb);
        const Type t = ea.type();
        const int w = t.bits();
        auto decide = [op](auto x, auto y) {
            switch (op) {
            case Compare::EQ: return x == y;
            case Compare::NE: return x != y;
            case Compare::LT: return x < y;
            case Compare::LE: return x <= y;
            case Compare::GT: return x > y;
            case Compare::GE: return x >= y;
            }
            return false;
        };
        switch (scalar_shape(t)) {
        case ScalarShape::Bool:
            return [a, b, decide](EvalState &s) { return Scalar::of_bool(decide((int)a(s).is_true(), (int)b(s).is_true())); };
        case ScalarShape::Signed:
            return [a, b, w, decide](EvalState &s) {
                return Scalar::of_bool(decide(signed_operand(a(s), w), signed_operand(b(s), w)));
            };
        case ScalarShape::Unsigned:
            return [a, b, w, decide](EvalState &s) {
                return Scalar::of_bool(decide(unsigned_operand(a(s), w), unsigned_operand(b(s), w)));
            };
        case ScalarShape::Float32:
            return [a, b, decide](EvalState &s) { return Scalar::of_bool(decide(a(s).as_float(), b(s).as_float())); };
        case ScalarShape::Float64:
            return [a, b, decide](EvalState &s) { return Scalar::of_bool(decide(a(s).as_double(), b(s).as_double())); };
        }
        internal_error("ExprCompiler: unknown comparison");
    }

    Closure call(const Call *op) {
        const Type t = op->type;
        if (ir::is_undefined_value(op)) {
            Scalar zero = Scalar::zero(t);
            return [zero](EvalState &s) {
                s.undefined = true;
                return zero;
            };
        }
        std::vector<Closure> args;
        for (const Expr &a : op->args) args.push_back(compile(a));
        if (!ir::recurrence_callee(op).empty()) return hooks.recurrence_call(op, args);
        if (op->call_type == Call::Image) return hooks.input_call(op, args);
        if (op->is_intrinsic(Call::abs)) {
            Closure a = args.at(0);
            const UnaryFn fn = abs_fn(op->args.at(0).type());
            return [a, fn](EvalState &s) { return fn(a(s)); };
        }
        if (BinaryOp saturating; saturating_op(op, &saturating)) {
            Closure a = args.at(0), b = args.at(1);
            const BinaryFn fn = binary_fn(saturating, t);
            return [a, b, fn](EvalState &s) { return fn(a(s), b(s)); };
        }
        if (const UnaryFn fn = math_fn(op->name, t)) {
            Closure a = args.at(0);
            return [a, fn](EvalState &s) { return fn(a(s)); };
        }
        compile_error("call '", ir::to_source(Expr(op)), "' is not supported in a URE");
    }
};

}  // namespace

Closure compile_expr(const Expr &e, const ExprCompilerHooks &hooks) { return Compiler(hooks).compile(e); }

}  // namespace pulse
