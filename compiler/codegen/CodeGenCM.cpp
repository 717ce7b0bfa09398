#include "codegen/CodeGenCM.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "codegen/CmArguments.h"
#include "codegen/CodeGenC.h"
#include "ir/Target.h"
#include "codegen/CodeGenReference.h"
#include "ir/LaneVarying.h"
#include "codegen/KernelPrinter.h"
#include "ir/ExactSimplify.h"
#include "ir/Scalar.h"

// runtime/cm_emu/cm/cm.h as text (cmake/EmbedFile.cmake).
extern const char *const pulse_cm_emulation_header_text;

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Lanes whose guard is false get this element offset: the buffer surface's
/// bounds check turns their reads into 0 (the kernel IR's `guard ? x : 0`)
/// and drops their writes.
const char *kOutOfBounds = "0x3FFFFFFFu";

/// The CM element type of a Halide type. Masks (bool) are vector<ushort, N>
/// in CM, so bool maps to ushort.
std::string cm_type(Type t) {
    if (t.is_bool()) return "ushort";
    if (t.is_float()) return t.bits() == 32 ? "float" : "double";
    const char *u = t.is_uint() ? "u" : "";
    switch (t.bits()) {
    case 8: return std::string(t.is_uint() ? "uchar" : "char");
    case 16: return std::string(u) + "short";
    case 32: return std::string(u) + "int";
    case 64: return std::string(t.is_uint() ? "unsigned long long" : "long long");
    }
    std::ostringstream s;
    s << t;
    internal_error("CM backend: element type ", s.str(), " left for the printer (check_cm_support refuses it)");
}



/// A CM operand as printed, with what the printer knows of its form.
/// `converted_to` is the CM type T when the text is exactly one conversion
/// T(...), set where that conversion is built, so a conversion to T that
/// would wrap it again is left out without reading the text back. A mask
/// and a vector<ushort, W> are the same CM type, hence one string for both.
struct CmOperand {
    std::string text;
    std::string converted_to;  ///< empty unless `text` is exactly converted_to(...)

    bool is_conversion_to(const std::string &type) const { return !converted_to.empty() && converted_to == type; }
};

/// Prints the kernel IR as the body of a CM kernel. Lane-varying values are
/// vector<T, W> (lane l of the warp is lane l of the vector); the rest are
/// scalars. Loads, lane exchanges and guarded stores become statements,
/// issued before the statement that uses them (`pending`): loads are safe
/// wherever they run (their guard is part of them).
class CmPrinter : public KernelPrinter {
public:
    CmPrinter(const kir::Kernel &k) : KernelPrinter(k), varying(k.body), W(cm_lanes(k)) {
        for (const kir::BufferArg &b : k.buffers) {
            internal_assert(b.placement == kir::Placement::Global && b.type.bits() == 32, "CM backend: buffer ", b.name,
                            " left for the printer (check_cm_support refuses it)");
        }
    }

    /// The kernel body, one hardware thread's.
    std::string body() {
        out.str("");
        stmt(kernel.body, 1);
        return out.str();
    }

private:
    const LaneVarying varying;
    const int W;
    std::vector<std::string> pending;  ///< statements the next printed statement needs first
    std::vector<std::string> masks;    ///< the lanes that run the current code (varying guards), innermost last
    int next_temp = 0;

    const char *backend() const override { return "CM"; }
    std::string w() const { return std::to_string(W); }
    std::string vtype(Type t) const { return "vector<" + cm_type(t) + ", " + w() + ">"; }
    std::string temp(const char *what) { return std::string("_") + what + std::to_string(next_temp++); }

    void flush(int indent) {
        for (const std::string &p : pending) {
            std::istringstream lines(p);
            std::string line;
            while (std::getline(lines, line)) out << pad(indent) << line << "\n";
        }
        pending.clear();
    }

    // ---- expressions --------------------------------------------------------

    std::string expr(const Expr &e) override {
        std::string s = scalar(e);
        internal_assert(pending.empty(), "CM backend: a load in a loop bound or guard: ", e);
        return s;
    }

    /// A lane-uniform expression as C.
    std::string scalar(const Expr &e) {
        CPrinterHooks hooks;
        hooks.variable = [&](const std::string &v) -> std::string {
            internal_assert(v != kir::lane_var && !varying.has(v), "CM backend: lane-varying ", v, " in a scalar");
            std::string f = cm_field_argument(kernel, v);
            if (!f.empty()) return f;
            if (v == kir::warp_index_var) return "warp_index";
            return c_name(v);
        };
        hooks.call = [&](const Call *op, const std::vector<std::string> &args) -> std::string {
            if (op->name == kir::intrinsic::shfl_up || op->name == kir::intrinsic::shfl_down || op->name == kir::intrinsic::shfl_idx) {
                return args[0];  // the same value on every lane
            }
            if (op->name == kir::intrinsic::load) {
                std::string t = temp("ld");
                uniform_load(op, t);
                return t;
            }
            internal_error("CM backend: cannot print the call ", Expr(op));
        };
        return print_c_expr(e, hooks);
    }

    /// Text that is not one conversion.
    static CmOperand plain(std::string text) { return {std::move(text), ""}; }
    /// type(inner): exactly one conversion to `type`.
    static CmOperand conversion(const std::string &type, const std::string &inner) {
        return {type + "(" + inner + ")", type};
    }

    /// `e` as a CM operand: a vector expression if it varies, else a scalar.
    CmOperand vec(const Expr &e) {
        // A C expression: never a conversion to a vector type.
        if (!varying.varies(e)) return plain(scalar(e));
        Type t = e.type();
        auto bin = [&](const Expr &a, const char *op, const Expr &b) {
            std::string r = "(" + vec(a).text + " " + op + " " + vec(b).text + ")";
            // C's promotions widen narrow integers; Halide's arithmetic wraps in the type.
            if (t.bits() < 32 && !t.is_bool()) return conversion(vtype(t), r);
            return plain(r);
        };
        // Masks are vectors of 0 and 1, so logic is bitwise; kept as masks.
        auto logic = [&](const Expr &a, const char *op, const Expr &b) {
            return conversion(mask_type(), vec(a).text + " " + op + " " + vec(b).text);
        };
        if (const Variable *op = e.as<Variable>()) return plain(c_name(op->name));
        if (const Load *op = e.as<Load>()) {
            return plain(c_name(op->name) + ".row(" + std::to_string(kir::register_index(op->index, op->name)) + ")");
        }
        if (const Cast *op = e.as<Cast>()) {
            if (t.is_bool()) return plain("(" + vec(op->value).text + " != 0)");
            return conversion(vtype(t), vec(op->value).text);
        }
        if (const Add *op = e.as<Add>()) return bin(op->a, "+", op->b);
        if (const Sub *op = e.as<Sub>()) return bin(op->a, "-", op->b);
        if (const Mul *op = e.as<Mul>()) return bin(op->a, "*", op->b);
        if (const Div *op = e.as<Div>()) {
            if (t.is_float()) return bin(op->a, "/", op->b);
            return lanewise("pulse_vdiv", t, op->a, op->b);
        }
        if (const Mod *op = e.as<Mod>()) {
            internal_assert(!t.is_float(), "CM backend: floating-point % left for the printer: ", e);
            return lanewise("pulse_vmod", t, op->a, op->b);
        }
        if (const Min *op = e.as<Min>()) return t.is_float() ? lanewise("pulse_vfmin", t, op->a, op->b) : min_max(t, "<", op->a, op->b);
        if (const Max *op = e.as<Max>()) return t.is_float() ? lanewise("pulse_vfmax", t, op->a, op->b) : min_max(t, ">", op->a, op->b);
        if (const EQ *op = e.as<EQ>()) return bin(op->a, "==", op->b);
        if (const NE *op = e.as<NE>()) return bin(op->a, "!=", op->b);
        if (const LT *op = e.as<LT>()) return bin(op->a, "<", op->b);
        if (const LE *op = e.as<LE>()) return bin(op->a, "<=", op->b);
        if (const GT *op = e.as<GT>()) return bin(op->a, ">", op->b);
        if (const GE *op = e.as<GE>()) return bin(op->a, ">=", op->b);
        if (const And *op = e.as<And>()) return logic(op->a, "&", op->b);
        if (const Or *op = e.as<Or>()) return logic(op->a, "|", op->b);
        if (const Not *op = e.as<Not>()) return plain("(" + vec(op->a).text + " == 0)");
        if (const Select *op = e.as<Select>()) {
            CmOperand c = vec(op->condition), a = vec(op->true_value), b = vec(op->false_value);
            return vselect(t, c, a, b);
        }
        if (const Call *op = e.as<Call>()) {
            if (op->name == kir::intrinsic::load) {
                std::string t = temp("ld");
                gather(op, t);
                return plain(t);
            }
            if (kir::is_lane_exchange(op)) {
                std::string t = temp("x");
                exchange(op, t);
                return plain(t);
            }
            if (op->is_intrinsic(Call::likely) || op->is_intrinsic(Call::likely_if_innermost)) return vec(op->args[0]);
            if (BinaryOp saturating; saturating_op(op, &saturating)) {
                binary_fn(saturating, t);  // refuses a float
                return lanewise(saturating == BinaryOp::SaturatingAdd ? "pulse_vsat_add" : "pulse_vsat_sub", t, op->args[0], op->args[1]);
            }
            if (op->is_intrinsic(Call::abs)) {
                const Type at = op->args[0].type();
                if (at.is_uint()) return vec(op->args[0]);
                if (at.is_float()) return plain("pulse_vfabs<" + cm_type(at) + ", " + w() + ">(" + as_vector(op->args[0]).text + ")");
                return plain("pulse_viabs<" + cm_type(t) + ", " + cm_type(at) + ", " + w() + ">(" + as_vector(op->args[0]).text + ")");
            }
        }
        internal_error("CM backend: cannot print ", e, " as an operation on lane vectors");
    }

    std::string mask_type() const { return "vector<ushort, " + w() + ">"; }

    /// `e` as a vector<T, W> whether or not it varies.
    CmOperand as_vector(const Expr &e) { return typed(vtype(e.type()), vec(e)); }
    CmOperand as_mask(const Expr &e) { return typed(mask_type(), vec(e)); }
    /// `v` converted to `type`, unless it is printed as that conversion already.
    static CmOperand typed(const std::string &type, const CmOperand &v) {
        return v.is_conversion_to(type) ? v : conversion(type, v.text);
    }

    CmOperand vselect(Type t, const CmOperand &c, const CmOperand &a, const CmOperand &b) {
        return plain("pulse_vselect<" + cm_type(t) + ", " + w() + ">(" + c.text + ", " + a.text + ", " + b.text + ")");
    }
    /// fn<T, W>(a, b), a lane-wise helper of vector_helpers().
    CmOperand lanewise(const char *fn, Type t, const Expr &a, const Expr &b) {
        return plain(std::string(fn) + "<" + cm_type(t) + ", " + w() + ">(" + as_vector(a).text + ", " + as_vector(b).text + ")");
    }

    /// Integer min (`op` "<") or max (">"), each operand printed once.
    CmOperand min_max(Type t, const char *op, const Expr &a, const Expr &b) {
        CmOperand x = vec(a), y = vec(b);
        return vselect(t, plain("(" + x.text + " " + op + " " + y.text + ")"), x, y);
    }

    /// An operand a region can be taken of: a variable, a register-array row
    /// or a temporary holding the value.
    CmOperand region_source(const Expr &e) {
        if (e.as<Variable>() || e.as<Load>()) return vec(e);
        std::string t = temp("v");
        CmOperand v = as_vector(e);
        pending.push_back(vtype(e.type()) + " " + t + " = " + v.text + ";");
        return plain(t);
    }

    // ---- statements that values need first -----------------------------------

    /// A load that differs between lanes into `dest`: dword scattered reads,
    /// 16 then 8 lanes at a time; lanes whose guard is false read the
    /// out-of-bounds offset, which returns 0.
    void gather(const Call *op, const std::string &dest) {
        kir::Access a = kir::access_of(op);
        const kir::BufferArg &b = kernel.buffer(a.buffer);
        std::string offset = as_vector(cast(UInt(32), intel_element_offset(b, a.coords))).text;
        const bool guarded = !is_const_one(a.guard);
        std::string guard = guarded ? as_mask(a.guard).text : "";
        std::ostringstream s;
        s << vtype(op->type) << " " << dest << ";\n{  // " << a.buffer << ": one element per lane\n";
        if (!guarded) {
            s << "    vector<uint, " << W << "> offset = " << offset << ";\n";
        } else {
            s << "    vector<uint, " << W << "> offset = " << kOutOfBounds << ";\n";
            s << "    offset.merge(" << offset << ", " << guard << ");\n";
        }
        for (int c = 0; c < W;) {
            int n = W - c >= 16 ? 16 : 8;
            s << "    read(surf_" << a.buffer << ", 0, offset.select<" << n << ", 1>(" << c << "), " << dest << ".select<" << n
              << ", 1>(" << c << "));\n";
            c += n;
        }
        s << "}";
        pending.push_back(s.str());
    }

    /// A load the same on every lane into the scalar `dest`: an oword block
    /// read of the 16 bytes that hold it (element 0's where the guard is false).
    void uniform_load(const Call *op, const std::string &dest) {
        kir::Access a = kir::access_of(op);
        const kir::BufferArg &b = kernel.buffer(a.buffer);
        std::string offset = scalar(intel_element_offset(b, a.coords));
        const bool guarded = !is_const_one(a.guard);
        std::string guard = guarded ? scalar(a.guard) : "";
        std::ostringstream s;
        s << c_type(op->type) << " " << dest << ";\n{  // " << a.buffer << ": the same element on every lane\n";
        if (!guarded) {
            s << "    const int element = " << offset << ";\n";
        } else {
            s << "    const bool inside = " << guard << ";\n";
            s << "    const int element = inside ? " << offset << " : 0;\n";
        }
        s << "    vector<" << cm_type(op->type) << ", 4> oword;\n";
        s << "    read(surf_" << a.buffer << ", (element >> 2) << 4, oword);\n";
        s << "    " << dest << " = " << (guarded ? "inside ? " : "") << "oword(element & 3)"
          << (guarded ? " : (" + c_type(op->type) + ")0" : "") << ";\n}";
        pending.push_back(s.str());
    }

    /// A lane exchange into the new vector `dest`.
    void exchange(const Call *op, const std::string &dest) {
        const std::string &n = op->name;
        if (n == kir::intrinsic::chain_source) {
            // The nearest lane l - k*dp (k >= 0) whose condition holds, -1 if
            // none: each pass moves the sources found so far one hop of dp.
            const int64_t *dp = as_const_int(op->args[1]);
            internal_assert(dp && *dp != 0, "CM backend: chain_source with a step that is not a non-zero constant: ", Expr(op));
            int64_t a = std::llabs(*dp);
            std::ostringstream s;
            s << "vector<int, " << W << "> " << dest << " = -1;\n";
            s << dest << ".merge(lane, " << as_mask(op->args[0]).text << ");\n";
            if (a < W) {
                int64_t m = W - a, hops = (W - 1 + a - 1) / a;
                s << "for (int hop = 0; hop < " << hops << "; hop++) {  // nearest source lane, dp = " << *dp << "\n";
                s << "    vector<int, " << W << "> from = -1;\n";
                if (*dp > 0) s << "    from.select<" << m << ", 1>(" << a << ") = " << dest << ".select<" << m << ", 1>(0);\n";
                else s << "    from.select<" << m << ", 1>(0) = " << dest << ".select<" << m << ", 1>(" << a << ");\n";
                s << "    " << dest << ".merge(from, " << dest << " < 0);\n}";
            }
            pending.push_back(s.str());
            return;
        }
        Type t = op->type;
        std::string src = region_source(op->args[0]).text;
        if (n == kir::intrinsic::shfl_idx) {
            // A permutation of the lanes.
            if (varying.varies(op->args[1])) {
                std::string index = conversion("vector<ushort, " + w() + ">", vec(op->args[1]).text).text;
                pending.push_back(vtype(t) + " " + dest + " = " + src + ".iselect(" + index + ");");
            } else {
                pending.push_back(vtype(t) + " " + dest + " = " + src + "(" + scalar(op->args[1]) + ");");
            }
            return;
        }
        // shfl_up: lane l takes lane l - d (its own where l < d); shfl_down:
        // lane l + d (its own past the last lane). A region copy each.
        const int64_t *d = as_const_int(op->args[1]);
        internal_assert(d && *d >= 0, "CM backend: a shuffle by ", op->args[1], ", not a constant");
        std::ostringstream s;
        s << vtype(t) << " " << dest << " = " << src << ";";
        if (*d > 0 && *d < W) {
            int64_t m = W - *d;
            if (n == kir::intrinsic::shfl_up) {
                s << "\n" << dest << ".select<" << m << ", 1>(" << *d << ") = " << src << ".select<" << m << ", 1>(0);";
            } else {
                s << "\n" << dest << ".select<" << m << ", 1>(0) = " << src << ".select<" << m << ", 1>(" << *d << ");";
            }
        }
        pending.push_back(s.str());
    }

    // ---- statements ------------------------------------------------------------

    void let(const LetStmt *op, int indent) override {
        const std::string name = c_name(op->name);
        const Call *call = op->value.as<Call>();
        if (!varying.has(op->name)) {
            if (call && call->name == kir::intrinsic::load) {
                uniform_load(call, name);
                flush(indent);
                return;
            }
            std::string v = scalar(op->value);
            flush(indent);
            out << pad(indent) << "const " << c_type(op->value.type()) << " " << name << " = " << v << ";\n";
            return;
        }
        if (call && varying.varies(op->value) && kir::is_lane_exchange(call)) {
            exchange(call, name);
            flush(indent);
            return;
        }
        if (call && varying.varies(op->value) && call->name == kir::intrinsic::load) {
            gather(call, name);
            flush(indent);
            return;
        }
        std::string v = vec(op->value).text;
        flush(indent);
        out << pad(indent) << vtype(op->value.type()) << " " << name << " = " << v << ";\n";
    }

    void if_then_else(const IfThenElse *op, int indent) override {
        if (!varying.varies(op->condition)) {
            std::string c = scalar(op->condition);
            flush(indent);
            out << pad(indent) << "if (" << c << ") {\n";
            stmt(op->then_case, indent + 1);
            if (op->else_case.defined()) {
                out << pad(indent) << "} else {\n";
                stmt(op->else_case, indent + 1);
            }
            out << pad(indent) << "}\n";
            return;
        }
        // A guard that differs between lanes: every lane runs both branches'
        // values; the mask keeps the writes to the lanes the guard lets through.
        std::string c = as_mask(op->condition).text;
        std::string m = temp("m");
        flush(indent);
        // Under an enclosing varying guard, the lanes of both.
        const bool nested = !masks.empty();
        const std::string outer = nested ? masks.back() : "";
        out << pad(indent) << mask_type() << " " << m << " = " << (nested ? conversion(mask_type(), outer + " & " + c).text : c) << ";\n";
        out << pad(indent) << "{  // the lanes of " << m << "\n";
        masks.push_back(m);
        stmt(op->then_case, indent + 1);
        masks.pop_back();
        out << pad(indent) << "}\n";
        if (op->else_case.defined()) {
            std::string e = temp("m");
            out << pad(indent) << mask_type() << " " << e << " = "
                << (nested ? conversion(mask_type(), outer + " & (" + m + " == 0)").text : "(" + m + " == 0)") << ";\n";
            out << pad(indent) << "{  // the lanes of " << e << "\n";
            masks.push_back(e);
            stmt(op->else_case, indent + 1);
            masks.pop_back();
            out << pad(indent) << "}\n";
        }
    }

    void allocate(const Allocate *op, int indent) override {
        int64_t n = kir::register_extent(op);
        if (varying.has(op->name)) {
            out << pad(indent) << "matrix<" << cm_type(op->type) << ", " << n << ", " << W << "> " << c_name(op->name) << ";\n";
        } else {
            out << pad(indent) << c_type(op->type) << " " << c_name(op->name) << "[" << n << "];\n";
        }
        stmt(op->body, indent);
    }

    void register_store(const Store *op, int indent) override {
        int64_t i = kir::register_index(op->index, op->name);
        if (!varying.has(op->name)) {
            std::string v = scalar(op->value);
            flush(indent);
            out << pad(indent) << c_name(op->name) << "[" << i << "] = " << v << ";\n";
            return;
        }
        std::string v = vec(op->value).text;
        flush(indent);
        std::string row = c_name(op->name) + ".row(" + std::to_string(i) + ")";
        if (masks.empty()) out << pad(indent) << row << " = " << v << ";\n";
        else out << pad(indent) << row << ".merge(" << v << ", " << masks.back() << ");\n";
    }

    /// Dword scattered writes, 16 then 8 lanes at a time; lanes outside the
    /// guard (and the enclosing guards) write to the out-of-bounds offset,
    /// which the surface drops.
    void buffer_store(const Call *c, int indent) override {
        kir::Access a = kir::access_of(c);
        const kir::BufferArg &b = kernel.buffer(a.buffer);
        std::string offset = as_vector(cast(UInt(32), intel_element_offset(b, a.coords))).text;
        std::string value = as_vector(a.value).text;
        // The lanes that write, where not all do: the enclosing guards' mask
        // variable, this store's guard, or both.
        const bool nested = !masks.empty(), guarded = !is_const_one(a.guard);
        std::string mask = nested ? masks.back() : "";
        if (guarded) {
            std::string g = as_mask(a.guard).text;
            mask = nested ? conversion(mask_type(), mask + " & " + g).text : g;
        }
        flush(indent);
        std::string p = pad(indent);
        out << p << "{  // " << a.buffer << "\n";
        if (!nested && !guarded) {
            out << p << "    vector<uint, " << W << "> offset = " << offset << ";\n";
        } else {
            out << p << "    vector<uint, " << W << "> offset = " << kOutOfBounds << ";\n";
            out << p << "    offset.merge(" << offset << ", " << mask << ");\n";
        }
        out << p << "    " << vtype(a.value.type()) << " data = " << value << ";\n";
        for (int k = 0; k < W;) {
            int n = W - k >= 16 ? 16 : 8;
            out << p << "    write(surf_" << a.buffer << ", 0, offset.select<" << n << ", 1>(" << k << "), data.select<" << n << ", 1>("
                << k << "));\n";
            k += n;
        }
        out << p << "}\n";
    }
};
/// Lane-wise helpers of the printed kernels: select, and the operations
/// whose semantics pulse/ScalarSemantics.h defines (integer / and %, float
/// min and max, saturating + and -), applied lane by lane with its functions.
std::string vector_helpers() {
    std::string s = "template <typename T, int N>\n"
                    "inline vector<T, N> pulse_vselect(vector<ushort, N> c, vector<T, N> a, vector<T, N> b) {\n"
                    "    vector<T, N> r = b;\n"
                    "    r.merge(a, c);\n"
                    "    return r;\n"
                    "}\n";
    for (const char *fn : {"div", "mod", "fmin", "fmax", "sat_add", "sat_sub"}) {
        s += std::string("template <typename T, int N>\n") + "inline vector<T, N> pulse_v" + fn +
             "(vector<T, N> a, vector<T, N> b) {\n"
             "    vector<T, N> r;\n"
             "    for (int i = 0; i < N; i++) r(i) = pulse_" + fn + "<T>(a(i), b(i));\n"
             "    return r;\n"
             "}\n";
    }
    s += "template <typename T, int N>\n"
         "inline vector<T, N> pulse_vfabs(vector<T, N> a) {\n"
         "    vector<T, N> r;\n"
         "    for (int i = 0; i < N; i++) r(i) = pulse_fabs<T>(a(i));\n"
         "    return r;\n"
         "}\n"
         "template <typename U, typename T, int N>\n"
         "inline vector<U, N> pulse_viabs(vector<T, N> a) {\n"
         "    vector<U, N> r;\n"
         "    for (int i = 0; i < N; i++) r(i) = pulse_iabs<U, T>(a(i));\n"
         "    return r;\n"
         "}\n";
    return s;
}


std::string print_kernel_file(const kir::Kernel &k, const CmTarget &target) {
    // check_cm_support (a pass for CM targets) refused what CM cannot run.
    const CmRegisterPlan plan = plan_cm_registers(k, target);
    const int W = cm_lanes(k);
    CmPrinter printer(k);
    std::string body = printer.body();
    std::ostringstream out;
    out << "// " << k.name << "_genx.cpp: Intel C for Metal kernel. " << generated_by() << ".\n//\n// " << comment_lines(k.description);
    out << "//\n// One hardware thread runs what one warp of the kernel IR runs: lane l of every\n"
        << "// vector<T, " << W << "> is lane l of the warp (lanes past the array idle, as on a GPU).\n"
        << "// Values the same on every lane are scalars. Shuffles are region copies, a\n"
        << "// shuffle by lane index an iselect, a chain's source lane a shift-and-merge per\n"
        << "// hop; a guard that differs between lanes is a mask on the writes under it.\n//\n";
    out << "// Register plan (" << target.name << ", " << plan.available << " bytes of GRF; about " << plan.bytes
        << " used at the peak):\n";
    for (const CmRegisterUse &u : plan.uses) out << "//   " << u.bytes << " bytes: " << u.what << "\n";
    out << "//\n// Buffers: the layout of " << k.name << "_reference.h (" << k.name << "_BUFFER_region), with\n"
        << "// BUFFER_minD, BUFFER_extentD and BUFFER_strideD in elements. Lanes that must not\n"
        << "// touch memory use element offset " << kOutOfBounds << ": the buffer surface's bounds\n"
        << "// check makes such a read return 0 and drops such a write.\n";
    out << "#include <cm/cm.h>\n#include <stdint.h>\n\n";
    out << scalar_semantics_source();
    out << "#ifndef PULSE_CM_VECTOR_HELPERS\n#define PULSE_CM_VECTOR_HELPERS\n" << vector_helpers() << "#endif\n\n";
    out << "extern \"C\" _GENX_MAIN_ void " << k.name << "(";
    std::vector<std::string> params = cm_kernel_parameters(k);
    for (size_t i = 0; i < params.size(); i++) out << (i ? ",\n        " : "") << params[i];
    out << ") {\n";
    out << "    // One thread per warp of the kernel IR.\n";
    out << "    const int thread = cm_group_id(0) * cm_local_size(0) + cm_local_id(0);\n";
    out << "    if (thread >= warps) return;\n";
    out << "    [[maybe_unused]] const int64_t warp_index = thread;\n";
    out << "    const int lane_init[" << W << "] = {";
    for (int l = 0; l < W; l++) out << (l ? ", " : "") << l;
    out << "};\n";
    out << "    [[maybe_unused]] vector<int, " << W << "> lane(lane_init);\n";
    out << body << "}\n";
    return out.str();
}

}  // namespace

std::string print_cm_kernel(const kir::Kernel &kernel, const Target &target) {
    std::string text;
    kir::on_large_stack([&] { text = print_kernel_file(kernel, target.cm); });
    return text;
}

std::vector<GeneratedFile> print_cm(const kir::Kernel &kernel, const Target &target, const ir::UreProgram &source,
                                    const std::vector<std::string> &input_order, bool emulation) {
    const std::string &name = kernel.name;
    std::vector<GeneratedFile> files = {
        {name + "_genx.cpp", print_cm_kernel(kernel, target)},
        {name + "_reference.h", emit_reference_cpp(source, name, input_order)},
        {name + "_host.cpp", print_cm_host(kernel)},
    };
    if (emulation) {
        files.push_back({name + "_emu.cpp", print_cm_emulation_harness(kernel)});
        files.push_back(cm_emulation_header());
    }
    return files;
}

GeneratedFile cm_emulation_header() { return {"cm_emu/cm/cm.h", pulse_cm_emulation_header_text}; }

}  // namespace pulse
