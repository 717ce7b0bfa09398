#include "ExprCompiler.h"

#include <cmath>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

double round_to_type(double v, Type t) {
    if (t.is_float()) return t.bits() == 32 ? (double)(float)v : v;
    if (t.is_bool()) return v != 0 ? 1.0 : 0.0;
    int64_t i = (int64_t)v;
    if (t.bits() >= 64) return (double)i;
    uint64_t mask = (uint64_t(1) << t.bits()) - 1;
    uint64_t u = (uint64_t)i & mask;
    if (t.is_int() && (u >> (t.bits() - 1))) return (double)(int64_t)(u | ~mask);
    return (double)u;
}

namespace {

double int_div(double a, double b) {  // Halide: rounds towards negative infinity; x / 0 = 0
    int64_t x = (int64_t)a, y = (int64_t)b;
    if (y == 0) return 0;
    int64_t q = x / y, r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) q--;
    return (double)q;
}

double int_mod(double a, double b) {  // Halide: Euclidean, result in [0, |b|); x % 0 = 0
    int64_t x = (int64_t)a, y = (int64_t)b;
    if (y == 0) return 0;
    int64_t r = x % y;
    if (r < 0) r += y < 0 ? -y : y;
    return (double)r;
}

class Compiler {
public:
    explicit Compiler(const ExprCompilerHooks &h) : hooks(h) {}

    Closure compile(const Expr &e) {
        Type t = e.type();
        if (const IntImm *op = e.as<IntImm>()) return constant((double)op->value);
        if (const UIntImm *op = e.as<UIntImm>()) return constant((double)op->value);
        if (const FloatImm *op = e.as<FloatImm>()) return constant(round_to_type(op->value, t));
        if (const Variable *op = e.as<Variable>()) {
            int slot = hooks.variable_slot(op->name);
            return [slot](EvalState &s) { return (double)s.coords[slot]; };
        }
        if (const Cast *op = e.as<Cast>()) {
            Closure v = compile(op->value);
            if (t.is_float()) return [v, t](EvalState &s) { return round_to_type(v(s), t); };
            return [v, t](EvalState &s) { return round_to_type(std::trunc(v(s)), t); };
        }
        if (const Add *op = e.as<Add>()) return binary(op->a, op->b, t, [](double a, double b) { return a + b; });
        if (const Sub *op = e.as<Sub>()) return binary(op->a, op->b, t, [](double a, double b) { return a - b; });
        if (const Mul *op = e.as<Mul>()) return binary(op->a, op->b, t, [](double a, double b) { return a * b; });
        if (const Div *op = e.as<Div>()) {
            if (t.is_float()) return binary(op->a, op->b, t, [](double a, double b) { return a / b; });
            return binary(op->a, op->b, t, int_div);
        }
        if (const Mod *op = e.as<Mod>()) {
            if (t.is_float()) return binary(op->a, op->b, t, [](double a, double b) { return a - b * std::floor(a / b); });
            return binary(op->a, op->b, t, int_mod);
        }
        if (const Min *op = e.as<Min>()) return binary(op->a, op->b, t, [](double a, double b) { return std::min(a, b); });
        if (const Max *op = e.as<Max>()) return binary(op->a, op->b, t, [](double a, double b) { return std::max(a, b); });
        if (const EQ *op = e.as<EQ>()) return binary(op->a, op->b, t, [](double a, double b) { return double(a == b); });
        if (const NE *op = e.as<NE>()) return binary(op->a, op->b, t, [](double a, double b) { return double(a != b); });
        if (const LT *op = e.as<LT>()) return binary(op->a, op->b, t, [](double a, double b) { return double(a < b); });
        if (const LE *op = e.as<LE>()) return binary(op->a, op->b, t, [](double a, double b) { return double(a <= b); });
        if (const GT *op = e.as<GT>()) return binary(op->a, op->b, t, [](double a, double b) { return double(a > b); });
        if (const GE *op = e.as<GE>()) return binary(op->a, op->b, t, [](double a, double b) { return double(a >= b); });
        if (const And *op = e.as<And>()) {
            Closure a = compile(op->a), b = compile(op->b);
            return [a, b](EvalState &s) { return double(a(s) != 0 && b(s) != 0); };
        }
        if (const Or *op = e.as<Or>()) {
            Closure a = compile(op->a), b = compile(op->b);
            return [a, b](EvalState &s) { return double(a(s) != 0 || b(s) != 0); };
        }
        if (const Not *op = e.as<Not>()) {
            Closure a = compile(op->a);
            return [a](EvalState &s) { return double(a(s) == 0); };
        }
        if (const Select *op = e.as<Select>()) {
            Closure c = compile(op->condition), a = compile(op->true_value), b = compile(op->false_value);
            return [c, a, b](EvalState &s) { return c(s) != 0 ? a(s) : b(s); };
        }
        if (const Call *op = e.as<Call>()) return call(op);
        compile_error("expression '", ir::to_source(e), "' uses an operation the reference interpreter does not evaluate");
    }

private:
    const ExprCompilerHooks &hooks;

    static Closure constant(double v) {
        return [v](EvalState &) { return v; };
    }

    template<typename F>
    Closure binary(const Expr &ea, const Expr &eb, Type t, F f) {
        Closure a = compile(ea), b = compile(eb);
        if (t.is_bool()) return [a, b, f](EvalState &s) { return f(a(s), b(s)); };
        if (t.is_float() && t.bits() == 64) return [a, b, f](EvalState &s) { return f(a(s), b(s)); };
        return [a, b, f, t](EvalState &s) { return round_to_type(f(a(s), b(s)), t); };
    }

    Closure call(const Call *op) {
        if (ir::is_undefined_value(op)) {
            return [](EvalState &s) {
                s.undefined = true;
                return 0.0;
            };
        }
        std::vector<Closure> args;
        for (const Expr &a : op->args) args.push_back(compile(a));
        if (!ir::recurrence_callee(op).empty()) return hooks.recurrence_call(op, args);
        if (op->call_type == Call::Image) return hooks.input_call(op, args);
        Type t = op->type;
        auto unary = [&](double (*f)(double)) -> Closure {
            Closure a = args.at(0);
            return [a, f, t](EvalState &s) { return round_to_type(f(a(s)), t); };
        };
        if (op->is_intrinsic(Call::abs)) return unary([](double v) { return std::fabs(v); });
        const std::string &n = op->name;
        if (n == "sqrt_f32" || n == "sqrt_f64") return unary([](double v) { return std::sqrt(v); });
        if (n == "exp_f32" || n == "exp_f64") return unary([](double v) { return std::exp(v); });
        if (n == "floor_f32" || n == "floor_f64") return unary([](double v) { return std::floor(v); });
        compile_error("call '", ir::to_source(Expr(op)), "' is not supported in a URE");
    }
};

}  // namespace

Closure compile_expr(const Expr &e, const ExprCompilerHooks &hooks) { return Compiler(hooks).compile(e); }

}  // namespace pulse
