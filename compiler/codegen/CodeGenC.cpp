#include "codegen/CodeGenC.h"

#include <iomanip>
#include <sstream>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

std::string c_type(Type t) {
    if (t.is_bool()) return "bool";
    if (t.is_float()) return t.bits() == 32 ? "float" : "double";
    std::ostringstream s;
    s << (t.is_uint() ? "uint" : "int") << t.bits() << "_t";
    return s.str();
}

std::string c_helper_functions(const std::string &q) {
    return q + " int64_t pulse_floordiv(int64_t a, int64_t b) {\n"
               "    if (b == 0) return 0;\n"
               "    int64_t q = a / b, r = a % b;\n"
               "    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;\n"
               "}\n" +
           q + " int64_t pulse_floormod(int64_t a, int64_t b) {\n"
               "    if (b == 0) return 0;\n"
               "    int64_t r = a % b;\n"
               "    return r < 0 ? r + (b < 0 ? -b : b) : r;\n"
               "}\n";
}

namespace {

class CPrinter {
public:
    explicit CPrinter(const CPrinterHooks &h) : hooks(h) {}

    std::string print(const Expr &e) {
        Type t = e.type();
        if (const IntImm *op = e.as<IntImm>()) {
            if (op->type.bits() > 32) return std::to_string(op->value) + "ll";
            return op->value < 0 ? "(" + std::to_string(op->value) + ")" : std::to_string(op->value);
        }
        if (const UIntImm *op = e.as<UIntImm>()) return t.is_bool() ? (op->value ? "true" : "false") : std::to_string(op->value) + "u";
        if (const FloatImm *op = e.as<FloatImm>()) {
            std::ostringstream s;
            s << std::setprecision(t.bits() == 32 ? 9 : 17) << std::showpoint << op->value;
            std::string text = s.str();
            if (t.bits() == 32) text += "f";
            return op->value < 0 ? "(" + text + ")" : text;
        }
        if (const Variable *op = e.as<Variable>()) return hooks.variable(op->name);
        if (const StringImm *op = e.as<StringImm>()) return "\"" + op->value + "\"";
        if (const Cast *op = e.as<Cast>()) return "((" + c_type(t) + ")" + print(op->value) + ")";
        if (const Add *op = e.as<Add>()) return binary(op->a, "+", op->b);
        if (const Sub *op = e.as<Sub>()) return binary(op->a, "-", op->b);
        if (const Mul *op = e.as<Mul>()) return binary(op->a, "*", op->b);
        if (const Div *op = e.as<Div>()) {
            if (t.is_float()) return binary(op->a, "/", op->b);
            return "((" + c_type(t) + ")pulse_floordiv(" + print(op->a) + ", " + print(op->b) + "))";
        }
        if (const Mod *op = e.as<Mod>()) {
            if (t.is_float()) compile_error("floating-point % is not supported in generated code: ", ir::to_source(e));
            return "((" + c_type(t) + ")pulse_floormod(" + print(op->a) + ", " + print(op->b) + "))";
        }
        if (const Min *op = e.as<Min>()) return "(" + print(op->a) + " < " + print(op->b) + " ? " + print(op->a) + " : " + print(op->b) + ")";
        if (const Max *op = e.as<Max>()) return "(" + print(op->a) + " > " + print(op->b) + " ? " + print(op->a) + " : " + print(op->b) + ")";
        if (const EQ *op = e.as<EQ>()) return binary(op->a, "==", op->b);
        if (const NE *op = e.as<NE>()) return binary(op->a, "!=", op->b);
        if (const LT *op = e.as<LT>()) return binary(op->a, "<", op->b);
        if (const LE *op = e.as<LE>()) return binary(op->a, "<=", op->b);
        if (const GT *op = e.as<GT>()) return binary(op->a, ">", op->b);
        if (const GE *op = e.as<GE>()) return binary(op->a, ">=", op->b);
        if (const And *op = e.as<And>()) return binary(op->a, "&&", op->b);
        if (const Or *op = e.as<Or>()) return binary(op->a, "||", op->b);
        if (const Not *op = e.as<Not>()) return "(!" + print(op->a) + ")";
        if (const Select *op = e.as<Select>()) {
            return "(" + print(op->condition) + " ? " + print(op->true_value) + " : " + print(op->false_value) + ")";
        }
        if (e.as<Let>()) {
            compile_error("let expressions are not supported in generated code: ", ir::to_source(e));
        }
        if (const Call *op = e.as<Call>()) return call(op);
        if (const Load *op = e.as<Load>()) return hooks.variable(op->name) + "[" + print(op->index) + "]";  // a register array
        compile_error("expression '", ir::to_source(e), "' cannot be printed as C");
    }

private:
    const CPrinterHooks &hooks;

    std::string binary(const Expr &a, const char *op, const Expr &b) { return "(" + print(a) + " " + op + " " + print(b) + ")"; }

    std::string call(const Call *op) {
        if (ir::is_undefined_value(op)) return "((" + c_type(op->type) + ")0)";
        std::vector<std::string> args;
        for (const Expr &a : op->args) args.push_back(print(a));
        if (op->is_intrinsic(Call::abs)) return "(" + args[0] + " < 0 ? -" + args[0] + " : " + args[0] + ")";
        const std::string &n = op->name;
        if (n == "sqrt_f32" || n == "exp_f32" || n == "floor_f32") return n.substr(0, n.size() - 4) + "f(" + args[0] + ")";
        if (n == "sqrt_f64" || n == "exp_f64" || n == "floor_f64") return n.substr(0, n.size() - 4) + "(" + args[0] + ")";
        return hooks.call(op, args);
    }
};

}  // namespace

std::string print_c_expr(const Expr &e, const CPrinterHooks &hooks) { return CPrinter(hooks).print(e); }

}  // namespace pulse
