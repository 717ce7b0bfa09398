#include "codegen/CodeGenC.h"

#include <iomanip>
#include <cmath>
#include <functional>
#include <optional>
#include <sstream>

#include "ir/KernelIR.h"
#include "ir/Scalar.h"

extern const char *const pulse_scalar_semantics_header_text;  // pulse/ScalarSemantics.h (EmbedFile.cmake)

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

std::string c_type(Type t) {
    if (t.is_vector()) {
        // Vectors of two lanes (pulse_vectors.cuh): int16 packed in 32 bits,
        // a mask of 16 bits a lane, or two values of any other type.
        if (t.lanes() != 2) compile_error("the vector type ", t, " has no C form: vectors have two lanes");
        if (t == Int(16, 2)) return "pulse_i16x2";
        if (t.is_bool()) return "pulse_m16x2";
        return "pulse_x2<" + c_type(t.element_of()) + ">";
    }
    if (t.is_bool()) return "bool";
    if (t.is_float()) return t.bits() == 32 ? "float" : "double";
    std::ostringstream s;
    s << (t.is_uint() ? "uint" : "int") << t.bits() << "_t";
    return s.str();
}

std::string scalar_semantics_source() { return pulse_scalar_semantics_header_text; }

namespace {

class CPrinter {
public:
    explicit CPrinter(const CPrinterHooks &h) : hooks(h) {}

    std::string print(const Expr &e) {
        Type t = e.type();
        if (t.is_vector() && !e.as<Variable>() && !e.as<Call>() && !e.as<Load>()) return vector(e);
        if (const Shuffle *op = e.as<Shuffle>()) {
            // One lane of a vector (a vector's shuffles are vector()'s).
            internal_assert(op->indices.size() == 1, "c printer: a scalar shuffle of several lanes: ", e);
            return lane(op->vectors, op->indices[0]);
        }
        if (const IntImm *op = e.as<IntImm>()) {
            if (op->type.bits() > 32) return std::to_string(op->value) + "ll";
            return op->value < 0 ? "(" + std::to_string(op->value) + ")" : std::to_string(op->value);
        }
        if (const UIntImm *op = e.as<UIntImm>()) {
            if (t.is_bool()) return op->value ? "true" : "false";
            return std::to_string(op->value) + (t.bits() > 32 ? "ull" : "u");
        }
        if (const FloatImm *op = e.as<FloatImm>()) {
            // NaN and the infinities have no literal in C: a quotient every
            // C, C++, CUDA and CM compiler folds (a reduction's identity is NaN).
            const std::string suffix = t.bits() == 32 ? "f" : "";
            if (std::isnan(op->value)) return "(0.0" + suffix + " / 0.0" + suffix + ")";
            if (std::isinf(op->value)) return std::string(op->value < 0 ? "(-1.0" : "(1.0") + suffix + " / 0.0" + suffix + ")";
            std::ostringstream s;
            s << std::setprecision(t.bits() == 32 ? 9 : 17) << std::showpoint << op->value;
            std::string text = s.str();
            if (t.bits() == 32) text += "f";
            return op->value < 0 ? "(" + text + ")" : text;
        }
        if (const Variable *op = e.as<Variable>()) return hooks.variable(op->name);
        if (const StringImm *op = e.as<StringImm>()) return "\"" + op->value + "\"";
        if (const Cast *op = e.as<Cast>()) return cast(t, op->value);
        if (const Add *op = e.as<Add>()) return integer_or_plain(e, "pulse_add", op->a, "+", op->b);
        if (const Sub *op = e.as<Sub>()) return integer_or_plain(e, "pulse_sub", op->a, "-", op->b);
        if (const Mul *op = e.as<Mul>()) return integer_or_plain(e, "pulse_mul", op->a, "*", op->b);
        if (const Div *op = e.as<Div>()) {
            if (t.is_float()) return binary(op->a, "/", op->b);
            return function("pulse_div", t, op->a, op->b);
        }
        if (const Mod *op = e.as<Mod>()) return function(t.is_float() ? "pulse_fmod" : "pulse_mod", t, op->a, op->b);
        if (const Min *op = e.as<Min>()) return function(t.is_float() ? "pulse_fmin" : "pulse_min", t, op->a, op->b);
        if (const Max *op = e.as<Max>()) return function(t.is_float() ? "pulse_fmax" : "pulse_max", t, op->a, op->b);
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
        if (const Load *op = e.as<Load>()) {
            if (op->type.is_vector() && op->index.type().is_vector() && !op->index.as<Ramp>()) {
                // A gather (a block's table read by packed instances): each lane its own element.
                return "pulse_vgather<" + c_type(op->type) + ">(" + hooks.variable(op->name) + ", " + print(op->index) + ")";
            }
            return hooks.variable(op->name) + "[" + register_index(op->type, op->index) + "]";  // a register array
        }
        compile_error("expression '", ir::to_source(e), "' cannot be printed as C");
    }

private:
    const CPrinterHooks &hooks;

    /// Lane `k` of the concatenation of `vectors`: a scalar as it is, a
    /// vector's lane through pulse_vlane.
    std::string lane(const std::vector<Expr> &vectors, int k) {
        for (const Expr &v : vectors) {
            if (k < v.type().lanes()) return v.type().is_scalar() ? print(v) : "pulse_vlane(" + print(v) + ", " + std::to_string(k) + ")";
            k -= v.type().lanes();
        }
        internal_error("c printer: a shuffle index past its vectors");
    }

    /// A vector expression (pulse_vectors.cuh): each operation lane by lane,
    /// with the language's semantics on each lane.
    std::string vector(const Expr &e) {
        const Type t = e.type();
        const std::string vt = c_type(t);
        auto call2 = [&](const char *fn, const Expr &a, const Expr &b) { return std::string(fn) + "(" + print(a) + ", " + print(b) + ")"; };
        if (const Broadcast *op = e.as<Broadcast>()) {
            if (op->value.type().is_vector()) compile_error("a broadcast of a vector has no C form: ", ir::to_source(e));
            return "pulse_vbroadcast<" + vt + ">(" + print(op->value) + ")";
        }
        if (const Ramp *op = e.as<Ramp>()) return "pulse_vramp<" + vt + ">(" + print(op->base) + ", " + print(op->stride) + ")";
        if (const Shuffle *op = e.as<Shuffle>()) {
            std::string s = "pulse_vpack<" + vt + ">(";
            for (size_t k = 0; k < op->indices.size(); k++) s += (k ? ", " : "") + lane(op->vectors, op->indices[k]);
            return s + ")";
        }
        if (const Cast *op = e.as<Cast>()) return "pulse_vcast<" + vt + ">(" + print(op->value) + ")";
        if (const Add *op = e.as<Add>()) return call2("pulse_vadd", op->a, op->b);
        if (const Sub *op = e.as<Sub>()) return call2("pulse_vsub", op->a, op->b);
        if (const Mul *op = e.as<Mul>()) return call2("pulse_vmul", op->a, op->b);
        if (const Div *op = e.as<Div>()) return call2("pulse_vdiv", op->a, op->b);
        if (const Mod *op = e.as<Mod>()) return call2("pulse_vmod", op->a, op->b);
        if (const Min *op = e.as<Min>()) return call2("pulse_vmin", op->a, op->b);
        if (e.as<Max>()) return max_tree(e);
        if (const EQ *op = e.as<EQ>()) return call2("pulse_veq", op->a, op->b);
        if (const NE *op = e.as<NE>()) return call2("pulse_vne", op->a, op->b);
        if (const LT *op = e.as<LT>()) return call2("pulse_vlt", op->a, op->b);
        if (const LE *op = e.as<LE>()) return call2("pulse_vle", op->a, op->b);
        if (const GT *op = e.as<GT>()) return call2("pulse_vlt", op->b, op->a);
        if (const GE *op = e.as<GE>()) return call2("pulse_vle", op->b, op->a);
        if (const And *op = e.as<And>()) return call2("pulse_vand", op->a, op->b);
        if (const Or *op = e.as<Or>()) return call2("pulse_vor", op->a, op->b);
        if (const Not *op = e.as<Not>()) return "pulse_vnot(" + print(op->a) + ")";
        if (const Select *op = e.as<Select>()) {
            if (op->condition.type().is_scalar()) return "(" + print(op->condition) + " ? " + print(op->true_value) + " : " + print(op->false_value) + ")";
            return "pulse_vselect(" + print(op->condition) + ", " + print(op->true_value) + ", " + print(op->false_value) + ")";
        }
        compile_error("the vector expression '", ir::to_source(e), "' has no C form (vectors: +, -, *, /, %, min, max, comparisons, "
                      "logic, select, casts, broadcasts, ramps and shuffles)");
        return "";
    }

    /// A tree of maxima, its leaves gathered, as the fewest three-operand
    /// maxima (sm_90's DPX instructions on packed int16): a zero leaf is the
    /// relu form, a leaf a + b fuses with another leaf as max(a + b, c).
    std::string max_tree(const Expr &e) {
        std::vector<Expr> leaves;
        // (Below the root, max(v, 0) of a value whose relu is taken elsewhere
        // too stays whole: Best = max(Best, max(H, 0)) beside H's carry
        // max(H, 0), one relu for both.)
        auto named_relu = [&](const Max *m) {
            const Variable *v = kir::relu_of_variable(m);
            return v && hooks.shared_relu && hooks.shared_relu(v->name);
        };
        std::function<void(const Expr &)> gather = [&](const Expr &x) {
            const Max *m = x.as<Max>();
            if (m && (x.same_as(e) || !named_relu(m))) return gather(m->a), gather(m->b);
            leaves.push_back(x);
        };
        gather(e);
        bool relu = false;
        std::vector<std::string> terms;
        std::optional<std::pair<Expr, Expr>> sum;
        for (const Expr &leaf : leaves) {
            const Broadcast *b = leaf.as<Broadcast>();
            if (b && is_const_zero(b->value) && !relu) relu = true;
            else if (const Add *a = leaf.as<Add>(); a && !sum) sum = std::make_pair(a->a, a->b);
            else terms.push_back(print(leaf));
        }
        const std::string zero = "pulse_vbroadcast<" + c_type(e.type()) + ">(0)";
        if (sum) {
            // max(a + b, c), c another leaf (or the zero, which it then stands for).
            std::string c = !terms.empty() ? terms.back() : relu ? zero : "";
            if (c.empty()) return "pulse_vadd(" + print(sum->first) + ", " + print(sum->second) + ")";
            if (!terms.empty()) terms.pop_back();
            else relu = false;
            terms.push_back("pulse_vaddmax(" + print(sum->first) + ", " + print(sum->second) + ", " + c + ")");
        }
        while (terms.size() > 3) {
            const std::string a = terms[terms.size() - 3], b = terms[terms.size() - 2], c = terms.back();
            terms.resize(terms.size() - 3);
            terms.push_back("pulse_vmax3(" + a + ", " + b + ", " + c + ")");
        }
        if (terms.empty()) return zero;  // max(0, 0)
        if (relu) {
            if (terms.size() == 1) return "pulse_vmax_relu(" + terms[0] + ")";
            if (terms.size() == 2) return "pulse_vmax_relu(" + terms[0] + ", " + terms[1] + ")";
            return "pulse_vmax3_relu(" + terms[0] + ", " + terms[1] + ", " + terms[2] + ")";
        }
        if (terms.size() == 3) return "pulse_vmax3(" + terms[0] + ", " + terms[1] + ", " + terms[2] + ")";
        if (terms.size() == 2) return "pulse_vmax(" + terms[0] + ", " + terms[1] + ")";
        return terms[0];
    }

    /// The index of a register array: a scalar, or a vector's element of an
    /// array of vectors (vector_register_element).
    std::string register_index(Type t, const Expr &index) {
        return t.is_scalar() ? print(index) : std::to_string(vector_register_element(t, index));
    }

    std::string binary(const Expr &a, const char *op, const Expr &b) { return "(" + print(a) + " " + op + " " + print(b) + ")"; }

    /// fn<T...>(args), a function of pulse/ScalarSemantics.h at types `types`
    /// (or as the scalar_function hook spells it).
    std::string semantics_call(const std::string &fn, const std::vector<Type> &types, const std::vector<std::string> &args) {
        if (hooks.scalar_function) return hooks.scalar_function(fn, types, args);
        std::string s = fn + "<";
        for (size_t i = 0; i < types.size(); i++) s += (i ? ", " : "") + c_type(types[i]);
        s += ">(";
        for (size_t i = 0; i < args.size(); i++) s += (i ? ", " : "") + args[i];
        return s + ")";
    }

    /// fn<T>(a, b), a function of pulse/ScalarSemantics.h at type t.
    std::string function(const char *fn, Type t, const Expr &a, const Expr &b) { return semantics_call(fn, {t}, {print(a), print(b)}); }

    /// Integer arithmetic wraps (fn<T>), except index arithmetic (C's
    /// operators, see CPrinterHooks); float arithmetic is C's.
    std::string integer_or_plain(const Expr &e, const char *fn, const Expr &a, const char *op, const Expr &b) {
        const Type t = e.type();
        if (t.is_int_or_uint() && !t.is_bool() && !(hooks.is_index && hooks.is_index(e))) return function(fn, t, a, b);
        return binary(a, op, b);
    }

    std::string cast(Type to, const Expr &value) {
        const Type from = value.type();
        if (to.is_bool()) return "(" + print(value) + " != 0)";
        if (from.is_float() && !to.is_float()) {
            // The float type is deduced in C++; named where functions are per type.
            if (hooks.scalar_function) return hooks.scalar_function("pulse_float_to_int", {to, from}, {print(value)});
            return semantics_call("pulse_float_to_int", {to}, {print(value)});
        }
        return "((" + c_type(to) + ")" + print(value) + ")";
    }

    std::string call(const Call *op) {
        if (ir::is_undefined_value(op)) return "((" + c_type(op->type) + ")0)";
        std::vector<std::string> args;
        for (const Expr &a : op->args) args.push_back(print(a));
        if (op->is_intrinsic(Call::abs)) {
            const Type at = op->args[0].type();
            if (at.is_float()) return semantics_call("pulse_fabs", {at}, {args[0]});
            if (at.is_uint()) return args[0];
            return semantics_call("pulse_iabs", {op->type, at}, {args[0]});
        }
        if (BinaryOp saturating; saturating_op(op, &saturating)) {
            binary_fn(saturating, op->type.element_of());  // refuses a float
            const bool add = saturating == BinaryOp::SaturatingAdd;
            // Vectors lane by lane (pulse_vectors.cuh; packed int16: __vaddss2, __vsubss2).
            if (op->type.is_vector()) return std::string(add ? "pulse_vsat_add(" : "pulse_vsat_sub(") + args[0] + ", " + args[1] + ")";
            return semantics_call(add ? "pulse_sat_add" : "pulse_sat_sub", {op->type}, args);
        }
        const std::string &n = op->name;
        if (n == "sqrt_f32" || n == "exp_f32" || n == "floor_f32") return n.substr(0, n.size() - 4) + "f(" + args[0] + ")";
        if (n == "sqrt_f64" || n == "exp_f64" || n == "floor_f64") return n.substr(0, n.size() - 4) + "(" + args[0] + ")";
        return hooks.call(op, args);
    }
};

}  // namespace

std::string print_c_expr(const Expr &e, const CPrinterHooks &hooks) { return CPrinter(hooks).print(e); }

int64_t vector_register_element(Type t, const Expr &index) {
    const Ramp *r = index.as<Ramp>();
    const int64_t *base = r ? as_const_int(r->base) : nullptr;
    if (!r || !base || !is_const_one(r->stride) || *base % t.lanes() != 0) {
        compile_error("a vector access of a register array at ", ir::to_source(index), " has no C form: a dense ramp from a multiple of ",
                      t.lanes(), " is an element of an array of vectors");
    }
    return *base / t.lanes();
}

}  // namespace pulse
