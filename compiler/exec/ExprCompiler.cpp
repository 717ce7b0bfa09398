#include "exec/ExprCompiler.h"

#include <cmath>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// A value of integer type `t` from the two's complement bits of its value.
Scalar make_integer(uint64_t bits, bool is_signed, int width) {
    if (width == 1) return Scalar::of_bool((bits & 1) != 0);
    if (is_signed) return Scalar::of_int(wrap_signed(bits, width));
    return Scalar::of_uint(bits & width_mask(width));
}

/// An operand of signed integer type of `width` bits, as its exact value.
int64_t signed_operand(const Scalar &v, int width) { return wrap_signed(v.as_uint(), width); }
/// An operand of unsigned integer type of `width` bits, as its exact value.
uint64_t unsigned_operand(const Scalar &v, int width) { return v.as_uint() & width_mask(width); }

/// Halide's signed division: Euclidean (the remainder is never negative,
/// so it rounds down for a positive divisor and up for a negative one);
/// x / 0 = 0. Returns the two's complement bits (INT64_MIN / -1 wraps).
uint64_t euclidean_div(int64_t x, int64_t y) {
    if (y == 0) return 0;
    if (y == -1) return uint64_t(0) - (uint64_t)x;
    int64_t q = x / y, r = x % y;
    if (r < 0) q += y > 0 ? -1 : 1;
    return (uint64_t)q;
}

/// Halide's signed modulo: the remainder of Euclidean division, in [0, |y|); x % 0 = 0.
uint64_t euclidean_mod(int64_t x, int64_t y) {
    if (y == 0 || y == -1) return 0;
    int64_t r = x % y;
    if (r < 0) return (uint64_t)r + (y < 0 ? uint64_t(0) - (uint64_t)y : (uint64_t)y);
    return (uint64_t)r;
}


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
        if (const Add *op = e.as<Add>()) return arithmetic(op->a, op->b, t, Arith::Add);
        if (const Sub *op = e.as<Sub>()) return arithmetic(op->a, op->b, t, Arith::Sub);
        if (const Mul *op = e.as<Mul>()) return arithmetic(op->a, op->b, t, Arith::Mul);
        if (const Div *op = e.as<Div>()) return arithmetic(op->a, op->b, t, Arith::Div);
        if (const Mod *op = e.as<Mod>()) return arithmetic(op->a, op->b, t, Arith::Mod);
        if (const Min *op = e.as<Min>()) return arithmetic(op->a, op->b, t, Arith::Min);
        if (const Max *op = e.as<Max>()) return arithmetic(op->a, op->b, t, Arith::Max);
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

    enum class Arith { Add, Sub, Mul, Div, Mod, Min, Max };
    enum class Compare { EQ, NE, LT, LE, GT, GE };

    static Closure constant(Scalar v) {
        return [v](EvalState &) { return v; };
    }

    /// A binary operation whose operands and result have type `t`.
    Closure arithmetic(const Expr &ea, const Expr &eb, Type t, Arith op) {
        Closure a = compile(ea), b = compile(eb);
        const int w = t.bits();
        switch (scalar_shape(t)) {
        case ScalarShape::Float32: return float_arithmetic<float>(a, b, op);
        case ScalarShape::Float64: return float_arithmetic<double>(a, b, op);
        case ScalarShape::Bool:
            if (op == Arith::Min) return [a, b](EvalState &s) { return Scalar::of_bool(a(s).is_true() && b(s).is_true()); };
            if (op == Arith::Max) return [a, b](EvalState &s) { return Scalar::of_bool(a(s).is_true() || b(s).is_true()); };
            compile_error("arithmetic on bool values is not evaluated: ", ir::to_source(ea), ", ", ir::to_source(eb));
        case ScalarShape::Signed:
        case ScalarShape::Unsigned: break;
        }
        const bool sgn = t.is_int();
        switch (op) {
        // +, - and * wrap modulo 2^w: the low w bits of the 64-bit result.
        case Arith::Add:
            return [a, b, sgn, w](EvalState &s) { return make_integer(a(s).as_uint() + b(s).as_uint(), sgn, w); };
        case Arith::Sub:
            return [a, b, sgn, w](EvalState &s) { return make_integer(a(s).as_uint() - b(s).as_uint(), sgn, w); };
        case Arith::Mul:
            return [a, b, sgn, w](EvalState &s) { return make_integer(a(s).as_uint() * b(s).as_uint(), sgn, w); };
        case Arith::Div:
            if (sgn) {
                return [a, b, w](EvalState &s) {
                    return make_integer(euclidean_div(signed_operand(a(s), w), signed_operand(b(s), w)), true, w);
                };
            }
            return [a, b, w](EvalState &s) {
                uint64_t x = unsigned_operand(a(s), w), y = unsigned_operand(b(s), w);
                return Scalar::of_uint(y == 0 ? 0 : x / y);
            };
        case Arith::Mod:
            if (sgn) {
                return [a, b, w](EvalState &s) {
                    return make_integer(euclidean_mod(signed_operand(a(s), w), signed_operand(b(s), w)), true, w);
                };
            }
            return [a, b, w](EvalState &s) {
                uint64_t x = unsigned_operand(a(s), w), y = unsigned_operand(b(s), w);
                return Scalar::of_uint(y == 0 ? 0 : x % y);
            };
        case Arith::Min:
        case Arith::Max: {
            const bool is_min = op == Arith::Min;
            if (sgn) {
                return [a, b, w, is_min](EvalState &s) {
                    int64_t x = signed_operand(a(s), w), y = signed_operand(b(s), w);
                    return Scalar::of_int(is_min ? std::min(x, y) : std::max(x, y));
                };
            }
            return [a, b, w, is_min](EvalState &s) {
                uint64_t x = unsigned_operand(a(s), w), y = unsigned_operand(b(s), w);
                return Scalar::of_uint(is_min ? std::min(x, y) : std::max(x, y));
            };
        }
        }
        compile_error("internal error: unknown arithmetic operation");
    }

    /// +, -, *, /, %, min, max done in F (float for float32, double for float64).
    template<typename F>
    static Closure float_arithmetic(Closure a, Closure b, Arith op) {
        auto get = [](const Scalar &v) -> F {
            if constexpr (std::is_same_v<F, float>) return v.as_float();
            else return v.as_double();
        };
        auto make = [](F v) { return std::is_same_v<F, float> ? Scalar::of_float((float)v) : Scalar::of_double((double)v); };
        switch (op) {
        case Arith::Add: return [a, b, get, make](EvalState &s) { return make(get(a(s)) + get(b(s))); };
        case Arith::Sub: return [a, b, get, make](EvalState &s) { return make(get(a(s)) - get(b(s))); };
        case Arith::Mul: return [a, b, get, make](EvalState &s) { return make(get(a(s)) * get(b(s))); };
        case Arith::Div: return [a, b, get, make](EvalState &s) { return make(get(a(s)) / get(b(s))); };
        case Arith::Mod:
            // Halide's float modulo: a - b * floor(a / b), each step in F.
            return [a, b, get, make](EvalState &s) {
                F x = get(a(s)), y = get(b(s));
                F q = std::floor(x / y);
                F p = y * q;
                return make(x - p);
            };
        case Arith::Min: return [a, b, get, make](EvalState &s) { return make(std::min(get(a(s)), get(b(s)))); };
        case Arith::Max: return [a, b, get, make](EvalState &s) { return make(std::max(get(a(s)), get(b(s)))); };
        }
        compile_error("internal error: unknown arithmetic operation");
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
        compile_error("internal error: unknown comparison");
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
            // Halide's abs of a signed integer is the unsigned integer of its width.
            Closure a = args.at(0);
            const Type at = op->args.at(0).type();
            const int w = at.bits();
            switch (scalar_shape(at)) {
            case ScalarShape::Signed:
                return [a, w, t](EvalState &s) {
                    int64_t x = signed_operand(a(s), w);
                    uint64_t m = x < 0 ? uint64_t(0) - (uint64_t)x : (uint64_t)x;
                    return make_integer(m, t.is_int(), t.bits());
                };
            case ScalarShape::Float32: return [a](EvalState &s) { return Scalar::of_float(std::fabs(a(s).as_float())); };
            case ScalarShape::Float64: return [a](EvalState &s) { return Scalar::of_double(std::fabs(a(s).as_double())); };
            default: return [a, at](EvalState &s) { return Scalar::normalize(a(s), at); };
            }
        }
        const std::string &n = op->name;
        auto unary = [&](float (*f32)(float), double (*f64)(double)) -> Closure {
            Closure a = args.at(0);
            if (t.bits() == 32) return [a, f32](EvalState &s) { return Scalar::of_float(f32(a(s).as_float())); };
            return [a, f64](EvalState &s) { return Scalar::of_double(f64(a(s).as_double())); };
        };
        if (n == "sqrt_f32" || n == "sqrt_f64") {
            return unary([](float v) { return std::sqrt(v); }, [](double v) { return std::sqrt(v); });
        }
        if (n == "exp_f32" || n == "exp_f64") {
            return unary([](float v) { return std::exp(v); }, [](double v) { return std::exp(v); });
        }
        if (n == "floor_f32" || n == "floor_f64") {
            return unary([](float v) { return std::floor(v); }, [](double v) { return std::floor(v); });
        }
        compile_error("call '", ir::to_source(Expr(op)), "' is not supported in a URE");
    }
};

}  // namespace

Closure compile_expr(const Expr &e, const ExprCompilerHooks &hooks) { return Compiler(hooks).compile(e); }

}  // namespace pulse
