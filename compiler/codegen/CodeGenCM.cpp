#include "codegen/CodeGenCM.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>

#include "codegen/CodeGenC.h"
#include "codegen/CodeGenReference.h"

// runtime/cm_emu/cm/cm.h as text (cmake/EmbedFile.cmake).
extern const char *const pulse_cm_emulation_header_text;

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Lanes beyond the array in an I/O vector get this element offset: the
/// surface's bounds check turns their reads into 0 and drops their writes.
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
    compile_error("CM backend: element type ", s.str(), " has no CM equivalent");
}

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// Lanes of the vectors that move data between registers and a surface: the
/// dword scattered messages move 8 or 16 elements at a time.
int64_t io_width(int64_t npe) { return round_up(npe, 8); }

bool uses_variable(const Expr &e, const std::string &name) { return Halide::Internal::expr_uses_var(e, name); }

/// True if `e` differs between lanes: it mentions the space variable, a tap or
/// an input (inputs are loaded into vectors even when every lane reads the
/// same element).
bool is_varying(const Expr &e, const std::string &space) {
    class Finder : public IRVisitor {
    public:
        explicit Finder(const std::string &s) : space(s) {}
        const std::string &space;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Variable *op) override { found |= op->name == space; }
        void visit(const Call *op) override {
            if (sys::is_tap(op) || op->call_type == Call::Image) found = true;
            IRVisitor::visit(op);
        }
    } f(space);
    e.accept(&f);
    return f.found;
}

std::string tap_name(const sys::Tap &tap) {
    std::ostringstream s;
    s << tap.var << "_d" << (tap.dp < 0 ? "m" : "") << std::llabs(tap.dp) << "_t" << tap.dt;
    return s.str();
}

/// Peels `select(c, v)` (no false value) off an output's value: the mask where
/// it stores and the value it stores.
std::pair<Expr, Expr> split_store(const Expr &e) {
    if (const Select *s = e.as<Select>()) {
        if (ir::is_undefined_value(s->false_value)) {
            auto inner = split_store(s->true_value);
            return {s->condition && inner.first, inner.second};
        }
        if (ir::is_undefined_value(s->true_value)) {
            auto inner = split_store(s->false_value);
            return {!s->condition && inner.first, inner.second};
        }
    }
    return {const_true(), e};
}

/// What the kernel needs to know of the program, shared by the kernel printer
/// and the register plan.
struct KernelShape {
    int64_t npe = 0, nio = 0;
    int runtime_loop = -1;  ///< index in source.loops of the loop whose extent is `instances`
    std::vector<const sys::Variable *> variables;
};

KernelShape shape_of(const sys::SystolicProgram &p) {
    KernelShape k;
    k.npe = p.pe_count;
    k.nio = io_width(p.pe_count);
    k.runtime_loop = instances_loop(p.source);
    for (const sys::Variable &v : p.variables) k.variables.push_back(&v);
    return k;
}

/// Prints statement values as CM vector expressions. Uniform subexpressions
/// (the same on every lane) are printed as scalar C by print_c_expr; the rest
/// as operations on vector<T, NPE>. Loads of inputs are emitted into `pre`
/// (per step) or `hoisted` (before the time loop, for reads that do not depend
/// on time) as they are met.
class VectorPrinter {
public:
    VectorPrinter(const sys::SystolicProgram &p, const KernelShape &k) : p(p), k(k) {
        scalar_hooks.variable = [](const std::string &v) { return v; };
        scalar_hooks.call = [](const Call *op, const std::vector<std::string> &) -> std::string {
            compile_error("CM backend: call '", ir::to_source(Expr(op)), "' in a uniform expression cannot be printed");
        };
    }

    std::vector<std::string> pre, hoisted;

    /// `e` as CM source; a vector<..., NPE> expression if it varies between lanes.
    std::string print(const Expr &e) {
        if (!is_varying(e, p.space_var)) return print_c_expr(e, scalar_hooks);
        return vec(e);
    }

    /// `e` as a vector<T, NPE> value, whether or not it varies.
    std::string print_vector(const Expr &e) {
        std::string s = print(e);
        if (is_varying(e, p.space_var)) return s;
        return "vector<" + cm_type(e.type()) + ", " + std::to_string(k.npe) + ">(" + s + ")";
    }

private:
    const sys::SystolicProgram &p;
    const KernelShape &k;
    CPrinterHooks scalar_hooks;
    std::map<std::string, std::string> loads;  ///< printed read -> the vector holding it
    int next_load = 0;

    std::string n() const { return std::to_string(k.npe); }

    std::string vselect(Type t, const std::string &c, const std::string &a, const std::string &b) {
        return "pulse_vselect<" + cm_type(t) + ", " + n() + ">(" + c + ", " + a + ", " + b + ")";
    }

    std::string vec(const Expr &e) {
        Type t = e.type();
        auto bin = [&](const Expr &a, const char *op, const Expr &b) { return "(" + print(a) + " " + op + " " + print(b) + ")"; };
        if (const Variable *op = e.as<Variable>()) {
            if (op->name == p.space_var) return p.space_var;
            return op->name;
        }
        if (const Add *op = e.as<Add>()) return bin(op->a, "+", op->b);
        if (const Sub *op = e.as<Sub>()) return bin(op->a, "-", op->b);
        if (const Mul *op = e.as<Mul>()) return bin(op->a, "*", op->b);
        if (const Div *op = e.as<Div>()) {
            if (t.is_float()) return bin(op->a, "/", op->b);
            return "pulse_vfloordiv<" + n() + ">(" + print(op->a) + ", " + print(op->b) + ")";
        }
        if (const Mod *op = e.as<Mod>()) {
            if (t.is_float()) compile_error("CM backend: floating-point % is not supported: ", ir::to_source(e));
            return "pulse_vfloormod<" + n() + ">(" + print(op->a) + ", " + print(op->b) + ")";
        }
        if (const Min *op = e.as<Min>()) {
            std::string a = print(op->a), b = print(op->b);
            return vselect(t, "(" + a + " < " + b + ")", a, b);
        }
        if (const Max *op = e.as<Max>()) {
            std::string a = print(op->a), b = print(op->b);
            return vselect(t, "(" + a + " > " + b + ")", a, b);
        }
        if (const EQ *op = e.as<EQ>()) return bin(op->a, "==", op->b);
        if (const NE *op = e.as<NE>()) return bin(op->a, "!=", op->b);
        if (const LT *op = e.as<LT>()) return bin(op->a, "<", op->b);
        if (const LE *op = e.as<LE>()) return bin(op->a, "<=", op->b);
        if (const GT *op = e.as<GT>()) return bin(op->a, ">", op->b);
        if (const GE *op = e.as<GE>()) return bin(op->a, ">=", op->b);
        // Masks are vectors of 0 and 1, so logic is bitwise.
        if (const And *op = e.as<And>()) return bin(op->a, "&", op->b);
        if (const Or *op = e.as<Or>()) return bin(op->a, "|", op->b);
        if (const Not *op = e.as<Not>()) return "(" + print(op->a) + " == 0)";
        if (const Select *op = e.as<Select>()) return vselect(t, print(op->condition), print(op->true_value), print(op->false_value));
        if (const Cast *op = e.as<Cast>()) {
            if (t.is_bool()) return "(" + print(op->value) + " != 0)";
            return "vector<" + cm_type(t) + ", " + n() + ">(" + print(op->value) + ")";
        }
        if (const Call *op = e.as<Call>()) {
            sys::Tap tap;
            if (sys::is_tap(op, &tap)) {
                // A read of a later step is accepted only where it is never taken: its value never matters.
                if (tap.dt < 0) return "((" + cm_type(t) + ")0)";
                return tap.dt == 0 && tap.dp == 0 ? tap.var : tap_name(tap);
            }
            if (op->call_type == Call::Image) return load(op);
            if (ir::is_undefined_value(op)) return "((" + cm_type(t) + ")0)";
        }
        compile_error("CM backend: '", ir::to_source(e), "' cannot be printed as an operation on lane vectors");
    }

    /// Emits the read of input `op` at its (printed) index; returns the vector holding it.
    std::string load(const Call *op) {
        const std::string &in = op->name;
        if (op->type.bits() != 32) {
            compile_error("CM backend: input ", in, " has ", op->type.bits(),
                          "-bit elements; the dword scattered reads the backend emits move 32-bit elements");
        }
        bool stationary = true, broadcast = true;
        std::vector<std::string> index;
        for (const Expr &a : op->args) {
            stationary &= !uses_variable(a, p.time_var);
            broadcast &= !is_varying(a, p.space_var);
        }
        // A load that does not depend on time runs once, before the time loop,
        // where only the space and instance variables are defined.
        std::vector<std::string> &out = stationary ? hoisted : pre;
        for (const Expr &a : op->args) index.push_back(print(a));
        std::string offset = dense_offset_text(in, index);
        std::string key = in + "@" + offset;
        auto it = loads.find(key);
        if (it != loads.end()) return it->second;
        std::string id = std::to_string(next_load++);
        std::string v = in + "_ld" + id, T = cm_type(op->type);
        std::ostringstream s;
        if (broadcast) {
            // One element for every lane: read the oword (16 bytes) that holds
            // it with a block read and replicate it across the lanes. An index
            // outside the buffer (possible when no lane is active) reads
            // element 0 instead, so the block read stays inside the surface.
            s << "// " << ir::to_source(Expr(op)) << ": the same element on every lane\n";
            s << "int " << in << "_e" << id << " = " << offset << ";\n";
            s << "if (" << in << "_e" << id << " < 0 || " << in << "_e" << id << " >= " << in << "_elements) " << in << "_e" << id
              << " = 0;\n";
            s << "vector<" << T << ", 4> " << in << "_ow" << id << ";\n";
            s << "read(surf_" << in << ", (" << in << "_e" << id << " & ~3) * 4, " << in << "_ow" << id << ");\n";
            s << "vector<" << T << ", " << n() << "> " << v << " = " << in << "_ow" << id << ".replicate<" << n() << ", 1>(" << in
              << "_e" << id << " & 3);\n";
        } else {
            // One element per lane: dword scattered reads of 16 (then 8) lanes.
            s << "// " << ir::to_source(Expr(op)) << ": one element per lane\n";
            s << "vector<uint, " << k.nio << "> " << in << "_off" << id << " = " << kOutOfBounds << ";\n";
            s << in << "_off" << id << ".select<" << n() << ", 1>(0) = " << offset << ";\n";
            s << "vector<" << T << ", " << k.nio << "> " << in << "_io" << id << ";\n";
            for (int64_t c = 0; c < k.nio;) {
                int64_t w = k.nio - c >= 16 ? 16 : 8;
                s << "read(surf_" << in << ", 0, " << in << "_off" << id << ".select<" << w << ", 1>(" << c << "), " << in << "_io"
                  << id << ".select<" << w << ", 1>(" << c << "));\n";
                c += w;
            }
            s << "vector<" << T << ", " << n() << "> " << v << " = " << in << "_io" << id << ".select<" << n() << ", 1>(0);\n";
        }
        out.push_back(s.str());
        loads[key] = v;
        return v;
    }
};

std::string indent_block(const std::string &text, const std::string &indent) {
    std::istringstream in(text);
    std::string line, out;
    while (std::getline(in, line)) out += (line.empty() ? "" : indent) + line + "\n";
    return out;
}

/// `dst = src shifted by dp lanes` as region copies: lane l of dst gets lane
/// l - dp of src; lanes with no source get 0.
std::string shift_code(const std::string &dst, const std::string &src, int64_t dp, int64_t npe, const std::string &type) {
    std::ostringstream s;
    if (dp == 0) {
        s << "vector<" << type << ", " << npe << "> " << dst << " = " << src << ";\n";
        return s.str();
    }
    s << "vector<" << type << ", " << npe << "> " << dst << " = 0;\n";
    int64_t m = npe - std::llabs(dp);
    if (m <= 0) return s.str();
    if (dp > 0) {
        s << dst << ".select<" << m << ", 1>(" << dp << ") = " << src << ".select<" << m << ", 1>(0);\n";
    } else {
        s << dst << ".select<" << m << ", 1>(0) = " << src << ".select<" << m << ", 1>(" << -dp << ");\n";
    }
    return s.str();
}

std::string vector_helpers() {
    return "// Lane-wise helpers: select, and integer division rounding down (Halide's).\n"
           "template <typename T, int N>\n"
           "inline vector<T, N> pulse_vselect(vector<ushort, N> c, vector<T, N> a, vector<T, N> b) {\n"
           "    vector<T, N> r = b;\n"
           "    r.merge(a, c);\n"
           "    return r;\n"
           "}\n"
           "template <int N>\n"
           "inline vector<int, N> pulse_vfloordiv(vector<int, N> a, vector<int, N> b) {\n"
           "    vector<int, N> q = a / b;\n"
           "    vector<int, N> r = a - q * b;\n"
           "    q.merge(q - 1, (r != 0) & ((r < 0) != (b < 0)));\n"
           "    return q;\n"
           "}\n"
           "template <int N>\n"
           "inline vector<int, N> pulse_vfloormod(vector<int, N> a, vector<int, N> b) {\n"
           "    return a - pulse_vfloordiv<N>(a, b) * b;\n"
           "}\n";
}

std::string transform_text(const ir::UreProgram &src) {
    const ir::SpaceTimeTransform &t = *src.schedule.transform;
    std::ostringstream s;
    s << "(";
    for (size_t i = 0; i < t.source_loops.size(); i++) s << (i ? ", " : "") << t.source_loops[i];
    s << ") -> (";
    for (size_t i = 0; i < t.destination_loops.size(); i++) s << (i ? ", " : "") << t.destination_loops[i];
    s << "), matrix [";
    for (size_t r = 0; r < t.matrix.size(); r++) {
        s << (r ? "; " : "");
        for (size_t c = 0; c < t.matrix[r].size(); c++) s << (c ? " " : "") << t.matrix[r][c];
    }
    s << "]" << (t.check_time ? ", CheckTime" : "");
    return s.str();
}

void write_file(const std::string &path, const std::string &text) {
    std::ofstream f(path);
    if (!f) compile_error("cannot write ", path);
    f << text;
    if (!f) compile_error("cannot write ", path);
}

void make_directory(const std::string &dir) {
    std::string partial;
    for (size_t i = 0; i <= dir.size(); i++) {
        if (i == dir.size() || dir[i] == '/') {
            if (!partial.empty()) mkdir(partial.c_str(), 0755);
        }
        if (i < dir.size()) partial += dir[i];
    }
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) compile_error("cannot create directory ", dir);
}

/// The product of the extents of the instance loops other than the run-time
/// one: threads per `instances`.
int64_t fixed_instances(const sys::SystolicProgram &p, int runtime_loop) {
    int64_t n = 1;
    for (const ir::Loop &l : p.instance_loops) {
        if (p.source.loop_index(l.var) != runtime_loop) n *= l.extent;
    }
    return n;
}

/// Threads per group: the extents of the instance loops that the schedule maps
/// to gpu_threads (1 if none).
int64_t threads_per_group(const sys::SystolicProgram &p, int runtime_loop) {
    int64_t n = 1;
    for (const std::string &v : p.source.schedule.gpu_threads) {
        int l = p.source.loop_index(v);
        if (l >= 0 && l != runtime_loop) n *= p.source.loops[l].extent;
    }
    return n;
}

/// The buffers whose boxes the kernel takes as arguments (BUFFER_min<d>,
/// BUFFER_extent<d>): the inputs in `input_order`, then the outputs in merge
/// order, each with its number of dimensions.
std::vector<std::pair<std::string, size_t>> buffer_dimensions(const sys::SystolicProgram &p, const std::vector<std::string> &input_order) {
    std::vector<std::pair<std::string, size_t>> buffers;
    for (const std::string &in : input_order) buffers.push_back({in, (size_t)p.source.input(in).dimensions});
    for (const ir::Ure *u : p.source.outputs()) buffers.push_back({u->name, u->output_index().size()});
    return buffers;
}

}  // namespace

CmRegisterPlan plan_cm_registers(const sys::SystolicProgram &p, const CmTarget &target) {
    KernelShape k = shape_of(p);
    CmRegisterPlan plan;
    plan.available = target.bytes();
    auto add = [&](const std::string &what, int64_t bytes) {
        bytes = round_up(bytes, target.grf_bytes);
        plan.uses.push_back({what, bytes});
        plan.bytes += bytes;
    };
    add("thread payload and scalars", 2 * (int64_t)target.grf_bytes);
    add("lane indices (" + p.space_var + ") and active mask", k.npe * 4 + k.npe * 2);
    for (const sys::Variable &v : p.variables) {
        int64_t sz = v.type.bytes();
        if (v.history > 0) add(v.name + " history (" + std::to_string(v.history) + " x " + std::to_string(k.npe) + " lanes)", v.history * k.npe * sz);
        add(v.name + " current value", k.npe * sz);
        for (const sys::Tap &t : v.taps) {
            if (t.dt >= 0 && (t.dp != 0 || t.dt != 0)) add("tap " + tap_name(t), k.npe * sz);
        }
    }
    // Stationary loads live through the time loop; per-step loads are
    // temporaries, of which one read and its staging are counted.
    std::set<std::string> stationary;
    bool per_step = false;
    for (const sys::InputRead &r : p.input_reads) {
        bool uses_time = false;
        for (const Expr &e : r.index) uses_time |= uses_variable(e, p.time_var);
        std::ostringstream key;
        key << r.input;
        for (const Expr &e : r.index) key << "," << e;
        if (!uses_time) stationary.insert(key.str());
        else per_step = true;
    }
    for (const std::string &s : stationary) add("loaded once: " + s.substr(0, s.find(',')), k.npe * 4);
    add("I/O staging (offsets and data of one read or write)", k.nio * 4 * 2);
    if (per_step) add("one per-step load", k.npe * 4);
    add("expression temporaries", 2 * k.npe * 4);
    return plan;
}

namespace {

/// The CM backend runs every array instance as a hardware thread of its own
/// and maps nothing else; a schedule primitive asking for more is refused, not ignored.
void check_cm_schedule(const sys::SystolicProgram &p, const std::string &name) {
    const ir::Schedule &s = p.source.schedule;
    for (const ir::Tile &t : s.tiles) {
        compile_error("CM backend: ", name, ": ", t.unroll_inner ? "tile(" : "split(", t.var, ", ", t.outer, ", ", t.inner, ", ",
                      t.factor, ") is not mapped by the CM backend (each array instance is one thread): remove it for ",
                      "--emit cm, or use --emit cuda");
    }
    if (!s.reorder.empty()) {
        compile_error("CM backend: ", name, ": reorder is not mapped by the CM backend (array instances are threads, in no ",
                      "order): remove it for --emit cm, or use --emit cuda");
    }
    if (!s.stagings.empty()) {
        compile_error("CM backend: ", name, ": ", s.stagings.front().source, ".in(", s.stagings.front().consumer,
                      ") is not mapped by the CM backend: remove the staging for --emit cm, or use --emit cuda");
    }
    if (!s.gpu_threads.empty()) {
        compile_error("CM backend: ", name, ": gpu_threads is not mapped by the CM backend (lanes are PEs): remove it");
    }
    if (!s.gpu_blocks.empty()) {
        for (const ir::Loop &l : p.instance_loops) {
            if (std::find(s.gpu_blocks.begin(), s.gpu_blocks.end(), l.var) == s.gpu_blocks.end()) {
                compile_error("CM backend: ", name, ": gpu_blocks leaves out the instance loop '", l.var, "', which the CM ",
                              "backend runs as threads like the others: name every instance loop in gpu_blocks, or none");
            }
        }
    }
}

}  // namespace

std::string emit_cm_kernel(const sys::SystolicProgram &p, const std::string &name, const std::vector<std::string> &input_order,
                           const CmTarget &target) {
    if (p.pe_count <= 0 || p.steps() <= 0) compile_error("CM backend: ", name, " has no PEs or no steps");
    check_cm_schedule(p, name);
    CmRegisterPlan plan = plan_cm_registers(p, target);
    if (plan.bytes > plan.available) {
        std::ostringstream s;
        s << "CM backend: " << name << " needs about " << plan.bytes << " bytes of registers per thread but target "
          << target.name << " has " << plan.available << " (" << target.grf_registers << " registers of " << target.grf_bytes
          << " bytes); the kernel would spill. Largest uses:";
        std::vector<CmRegisterUse> uses = plan.uses;
        std::sort(uses.begin(), uses.end(), [](const CmRegisterUse &a, const CmRegisterUse &b) { return a.bytes > b.bytes; });
        for (size_t i = 0; i < uses.size() && i < 4; i++) s << " " << uses[i].what << ": " << uses[i].bytes << " bytes;";
        s << " fix: use fewer PEs (" << p.pe_count << " now: a smaller extent of the space loops), shorter histories "
          << "(a time row with smaller distances), or a target with a larger GRF";
        compile_error(s.str());
    }
    KernelShape k = shape_of(p);
    const std::string N = std::to_string(k.npe);
    for (const sys::Statement &st : p.statements) {
        if (st.is_output && st.type.bits() != 32) {
            compile_error("CM backend: output ", st.ure, " has ", st.type.bits(),
                          "-bit elements; the dword scattered writes the backend emits move 32-bit elements");
        }
    }

    VectorPrinter printer(p, k);
    std::ostringstream body;  // the time loop's body
    const std::string in2 = "        ";

    // Taps of past steps, read from the histories before any statement writes.
    for (const sys::Variable *v : k.variables) {
        for (const sys::Tap &t : v->taps) {
            if (t.dt <= 0) continue;  // this step's values, or a later step's (never taken)
            body << shift_code(tap_name(t), v->name + "_hist.row(" + std::to_string(t.dt - 1) + ")", t.dp, k.npe, cm_type(v->type));
        }
    }
    // Statements in merge order.
    for (const sys::Statement &st : p.statements) {
        printer.pre.clear();
        std::ostringstream s;
        if (!st.is_output) {
            // Copy chains along the lanes in this step (dt = 0, dp != 0) that
            // this statement reads of itself; other statements' same-step
            // reads of it are shifted from its final value, after it.
            std::vector<sys::Tap> chain, same_step;
            const sys::Variable &var = p.variable(st.ure);
            const std::vector<sys::Tap> own = sys::taps_in(st.value);
            for (const sys::Tap &t : var.taps) {
                if (t.dt != 0 || t.dp == 0) continue;
                same_step.push_back(t);
                if (std::find(own.begin(), own.end(), t) != own.end()) chain.push_back(t);
            }
            auto shift_final = [&]() {
                for (const sys::Tap &t : same_step) body << shift_code(tap_name(t), st.ure, t.dp, k.npe, cm_type(st.type));
            };
            // A chain that copies one lane-uniform value (select(c, A, tap)
            // with A the same on every lane) is a broadcast: every lane an
            // active lane can reach holds A, which the load already replicated.
            const Select *sel = st.value.as<Select>();
            sys::Tap copied;
            bool uniform_broadcast = chain.size() == 1 && sel && sys::is_tap(sel->false_value, &copied) && copied == chain[0] &&
                                     (!is_varying(sel->true_value, p.space_var) ||
                                      (sel->true_value.as<Call>() && sel->true_value.as<Call>()->call_type == Call::Image &&
                                       std::none_of(sel->true_value.as<Call>()->args.begin(), sel->true_value.as<Call>()->args.end(),
                                                    [&](const Expr &a) { return is_varying(a, p.space_var); })));
            std::string T = cm_type(st.type);
            if (uniform_broadcast) {
                std::string value = printer.print_vector(sel->true_value);
                s << "// " << st.ure << " = " << ir::to_source(st.value) << "\n";
                s << "// a broadcast: the chain copies one value to every lane\n";
                s << "vector<" << T << ", " << N << "> " << st.ure << " = " << value << ";\n";
                for (const std::string &pre : printer.pre) body << pre;
                body << s.str();
                shift_final();
                continue;
            }
            std::string value = printer.print_vector(st.value);
            s << "// " << st.ure << " = " << ir::to_source(st.value) << "\n";
            if (chain.empty()) {
                s << "vector<" << T << ", " << N << "> " << st.ure << " = " << value << ";\n";
            } else {
                // A value copied from lane l - dp in the same step: every
                // pass moves it one more hop, so after a pass per hop of the
                // longest chain every lane holds its source's value.
                int64_t min_dp = k.npe;
                for (const sys::Tap &t : chain) min_dp = std::min<int64_t>(min_dp, std::llabs(t.dp));
                int64_t passes = (k.npe - 1 + min_dp - 1) / min_dp + 1;
                s << "vector<" << T << ", " << N << "> " << st.ure << " = 0;\n";
                s << "for (int pass = 0; pass < " << passes << "; pass++) {  // broadcast along the lanes\n";
                std::string inner;
                for (const sys::Tap &t : chain) inner += shift_code(tap_name(t), st.ure, t.dp, k.npe, T);
                inner += st.ure + " = " + value + ";\n";
                s << indent_block(inner, "    ") << "}\n";
            }
            for (const std::string &pre : printer.pre) body << pre;
            body << s.str();
            shift_final();
            continue;
        } else {
            auto [cond, value] = split_store(st.value);
            std::vector<std::string> index;
            for (const Expr &e : st.output_index) index.push_back(printer.print(e));
            std::string offset = dense_offset_text(st.ure, index);
            std::string mask = printer.print(cond), v = printer.print(value);
            std::string T = cm_type(st.type), o = st.ure;
            s << "// store " << st.ure << " = " << ir::to_source(st.value) << " on active lanes\n";
            s << "vector<uint, " << k.nio << "> " << o << "_off = " << kOutOfBounds << ";\n";
            s << o << "_off.select<" << N << ", 1>(0).merge(vector<uint, " << N << ">(" << offset << "), active & " << mask << ");\n";
            s << "vector<" << T << ", " << k.nio << "> " << o << "_io = 0;\n";
            s << o << "_io.select<" << N << ", 1>(0) = " << v << ";\n";
            for (int64_t c = 0; c < k.nio;) {
                int64_t w = k.nio - c >= 16 ? 16 : 8;
                s << "write(surf_" << o << ", 0, " << o << "_off.select<" << w << ", 1>(" << c << "), " << o << "_io.select<" << w
                  << ", 1>(" << c << "));\n";
                c += w;
            }
        }
        for (const std::string &pre : printer.pre) body << pre;
        body << s.str();
    }
    // Histories: shift by one step, newest value into row 0.
    for (const sys::Variable *v : k.variables) {
        if (v->history <= 0) continue;
        if (v->history > 1) {
            std::string h = std::to_string(v->history - 1);
            body << v->name << "_hist.select<" << h << ", 1, " << N << ", 1>(1, 0) = " << v->name << "_hist.select<" << h << ", 1, "
                 << N << ", 1>(0, 0);\n";
        }
        body << v->name << "_hist.row(0) = " << v->name << ";\n";
    }
    std::string active = printer.print_vector(p.has_preimage);
    std::string hoisted;
    for (const std::string &h : printer.hoisted) hoisted += h;

    // ---- the file ----
    std::ostringstream out;
    const ir::UreProgram &src = p.source;
    out << "// " << name << "_genx.cpp: Intel C for Metal kernel generated by Pulse.\n//\n";
    out << "// UREs of " << src.name << " (merge order):\n";
    for (const ir::Ure &u : src.ures) {
        out << "//   " << u.lhs_text() << " = " << ir::to_source(u.value) << "\n";
    }
    out << "// Loops (innermost first):";
    for (const ir::Loop &l : src.loops) out << " " << l.var << " in [" << l.min << ", " << l.max() << "]";
    out << "\n// Space-time transform: " << transform_text(src) << "\n";
    out << "// Array: " << k.npe << " PEs (lane l is PE " << p.space_var << " = " << p.pe_min << " + l), steps " << p.time_var
        << " in [" << p.time_min << ", " << p.time_max << "]; one hardware thread per array instance";
    if (!p.instance_loops.empty()) {
        out << " (loops";
        for (const ir::Loop &l : p.instance_loops) out << " " << l.var;
        out << ")";
    }
    out << ".\n//\n// Register plan (" << target.name << ", " << plan.available << " bytes of GRF; about " << plan.bytes
        << " used):\n";
    for (const sys::Variable *v : k.variables) {
        out << "//   " << v->name << ": " << to_string(v->dataflow) << ", ";
        if (v->history > 0) {
            out << "history matrix<" << cm_type(v->type) << ", " << v->history << ", " << N << ">, row k = value of step t - 1 - k;";
        } else {
            out << "no history;";
        }
        out << " taps";
        for (const sys::Tap &t : v->taps) out << " (dp " << t.dp << ", dt " << t.dt << ")";
        out << "\n";
    }
    for (const CmRegisterUse &u : plan.uses) out << "//   " << u.bytes << " bytes: " << u.what << "\n";
    out << "//\n// Buffers are dense, first dimension innermost: element (i0, i1, ..) of input x\n"
           "// is at (i1 - x_min1) * x_extent0 + (i0 - x_min0), the region the host computes\n"
           "// with "
        << name << "_x_region; outputs likewise over the box their index spans\n"
        << "// (" << name << "_OUTPUT_region), with `instances` as the extent of loop '" << (k.runtime_loop >= 0 ? src.loops[k.runtime_loop].var : std::string("-")) << "'.\n"
        << "// Lanes that must not touch memory use element offset " << kOutOfBounds << ": the buffer\n"
           "// surface's bounds check makes such a read return 0 and drops such a write.\n";
    out << "#include <cm/cm.h>\n#include <stdint.h>\n\n";
    out << "#ifndef PULSE_C_HELPERS\n#define PULSE_C_HELPERS\n" << c_helper_functions("static inline") << "#endif\n";
    out << "#ifndef PULSE_CM_VECTOR_HELPERS\n#define PULSE_CM_VECTOR_HELPERS\n" << vector_helpers() << "#endif\n\n";

    out << "extern \"C\" _GENX_MAIN_ void " << name << "(";
    std::vector<std::string> params;
    for (const std::string &in : input_order) params.push_back("SurfaceIndex surf_" + in + " [[type(\"buffer_t\")]]");
    for (const ir::Ure &u : src.ures) {
        if (u.is_output) params.push_back("SurfaceIndex surf_" + u.name + " [[type(\"buffer_t\")]]");
    }
    params.push_back("int instances");
    for (const auto &[buffer, dimensions] : buffer_dimensions(p, input_order)) {
        for (size_t d = 0; d < dimensions; d++) {
            params.push_back("int " + buffer + "_min" + std::to_string(d));
            params.push_back("int " + buffer + "_extent" + std::to_string(d));
        }
    }
    for (size_t i = 0; i < params.size(); i++) out << (i ? ",\n        " : "") << params[i];
    out << ") {\n";
    const std::string in1 = "    ";
    out << in1 << "// One thread per array instance.\n";
    out << in1 << "const int thread = cm_group_id(0) * cm_local_size(0) + cm_local_id(0);\n";
    out << in1 << "if (thread >= " << fixed_instances(p, k.runtime_loop) << " * instances) return;\n";
    out << in1 << "int rest = thread;\n";
    for (size_t i = 0; i < p.instance_loops.size(); i++) {
        const ir::Loop &l = p.instance_loops[i];
        bool last = i + 1 == p.instance_loops.size();
        bool runtime = src.loop_index(l.var) == k.runtime_loop;
        std::string extent = runtime ? "instances" : std::to_string(l.extent);
        if (last) {
            out << in1 << "const int " << l.var << " = " << l.min << " + rest;\n";
        } else {
            out << in1 << "const int " << l.var << " = " << l.min << " + rest % " << extent << ";\n";
            out << in1 << "rest /= " << extent << ";\n";
        }
    }
    for (const std::string &in : input_order) {
        out << in1 << "const int " << in << "_elements = ";
        for (int d = 0; d < src.input(in).dimensions; d++) out << (d ? " * " : "") << in << "_extent" << d;
        out << ";\n";
    }
    out << in1 << "// PE index of each lane.\n";
    out << in1 << "const int lane_init[" << N << "] = {";
    for (int64_t l = 0; l < k.npe; l++) out << (l ? ", " : "") << l;
    out << "};\n";
    out << in1 << "vector<int, " << N << "> " << p.space_var << "(lane_init);\n";
    out << in1 << p.space_var << " += " << p.pe_min << ";\n";
    out << in1 << "// Histories.\n";
    for (const sys::Variable *v : k.variables) {
        if (v->history > 0) out << in1 << "matrix<" << cm_type(v->type) << ", " << v->history << ", " << N << "> " << v->name << "_hist = 0;\n";
    }
    if (!hoisted.empty()) {
        out << in1 << "// Inputs that do not change over time: loaded once.\n" << indent_block(hoisted, in1);
    }
    out << in1 << "for (int " << p.time_var << " = " << p.time_min << "; " << p.time_var << " <= " << p.time_max << "; " << p.time_var
        << "++) {\n";
    out << in2 << "// Lanes whose (" << p.space_var << ", " << p.time_var << ") is the image of a point of the domain.\n";
    out << in2 << "vector<ushort, " << N << "> active = " << active << ";\n";
    out << indent_block(body.str(), in2);
    out << in1 << "}\n}\n";
    return out.str();
}

namespace {

/// Declarations shared by the host program and the emulation harness: buffers
/// sized from the layout functions of the emitted reference, random inputs,
/// poisoned outputs, the reference run and the comparison.
struct HostParts {
    std::string setup, check;
};

HostParts host_parts(const sys::SystolicProgram &p, const std::string &name, const std::vector<std::string> &input_order) {
    const ir::UreProgram &src = p.source;
    std::ostringstream s;
    s << "    // Inputs: dense regions from " << name << "_INPUT_region, random and never zero.\n";
    s << "    std::mt19937 rng(seed);\n";
    for (size_t k = 0; k < input_order.size(); k++) {
        const ir::InputDecl &d = src.input(input_order[k]);
        std::string T = c_type(d.type);
        s << "    int64_t " << d.name << "_count = 1;\n";
        s << "    int64_t " << d.name << "_min[" << d.dimensions << "], " << d.name << "_extent[" << d.dimensions << "];\n";
        s << "    for (int d = 0; d < " << d.dimensions << "; d++) {\n";
        s << "        " << name << "_" << d.name << "_region(d, instances, &" << d.name << "_min[d], &" << d.name << "_extent[d]);\n";
        s << "        " << d.name << "_count *= " << d.name << "_extent[d];\n    }\n";
        s << "    std::vector<" << T << "> " << d.name << "(" << d.name << "_count);\n";
        s << "    for (auto &v : " << d.name << ") v = (" << T << ")random_nonzero(rng, " << (d.type.is_float() ? "true" : "false")
          << ");\n";
    }
    s << "    // Outputs: dense regions from " << name << "_OUTPUT_region, poisoned, so an element the kernel\n"
         "    // never writes is a mismatch.\n";
    for (const ir::Ure &u : src.ures) {
        if (!u.is_output) continue;
        std::string T = c_type(u.type);
        size_t dimensions = u.output_index().size();
        s << "    int64_t " << u.name << "_count = 1;\n";
        s << "    int64_t " << u.name << "_min[" << dimensions << "], " << u.name << "_extent[" << dimensions << "];\n";
        s << "    for (int d = 0; d < " << dimensions << "; d++) {\n";
        s << "        " << name << "_" << u.name << "_region(d, instances, &" << u.name << "_min[d], &" << u.name << "_extent[d]);\n";
        s << "        " << u.name << "_count *= " << u.name << "_extent[d];\n    }\n";
        s << "    std::vector<" << T << "> " << u.name << "(" << u.name << "_count, poison<" << T << ">()), " << u.name << "_expected("
          << u.name << "_count, poison<" << T << ">());\n";
    }
    s << "    " << name << "_reference(";
    for (const std::string &in : input_order) s << in << ".data(), ";
    for (const ir::Ure &u : src.ures) {
        if (u.is_output) s << u.name << "_expected.data(), ";
    }
    s << "instances);\n";
    HostParts parts;
    parts.setup = s.str();
    std::ostringstream c;
    c << "    bool ok = true;\n";
    for (const ir::Ure &u : src.ures) {
        if (!u.is_output) continue;
        c << "    if (ok) ok = compare(\"" << u.name << "\", " << u.name << ", " << u.name << "_expected);\n";
    }
    c << "    if (ok) std::printf(\"PASS\\n\");\n";
    c << "    return ok ? 0 : 1;\n";
    parts.check = c.str();
    return parts;
}

std::string host_helpers() {
    return "template <typename T> T poison() {\n"
           "    return std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : (T)0x7A7A7A7A;\n"
           "}\n"
           "static double random_nonzero(std::mt19937 &rng, bool real) {\n"
           "    if (real) {\n"
           "        double v = std::uniform_real_distribution<double>(0.1, 1.0)(rng);\n"
           "        return rng() % 2 ? v : -v;\n"
           "    }\n"
           "    int v = std::uniform_int_distribution<int>(1, 9)(rng);\n"
           "    return rng() % 2 ? v : -v;\n"
           "}\n"
           "// First element where `got` differs from `expected` (relative tolerance 1e-4\n"
           "// for floating point: the kernel may contract a * b + c into one rounding).\n"
           "template <typename T>\n"
           "static bool compare(const char *what, const std::vector<T> &got, const std::vector<T> &expected) {\n"
           "    for (size_t i = 0; i < got.size(); i++) {\n"
           "        double g = (double)got[i], e = (double)expected[i];\n"
           "        bool same = std::isnan(e) ? std::isnan(g) : std::fabs(g - e) <= 1e-4 * std::max(1.0, std::fabs(e));\n"
           "        if (!same) {\n"
           "            std::printf(\"FAIL: %s[%zu] = %.9g, expected %.9g\\n\", what, i, g, e);\n"
           "            return false;\n"
           "        }\n"
           "    }\n"
           "    return true;\n"
           "}\n";
}

/// The kernel's arguments after the surfaces, as host expressions.
std::vector<std::string> scalar_arguments(const sys::SystolicProgram &p, const std::vector<std::string> &input_order) {
    std::vector<std::string> a{"(int)instances"};
    for (const auto &[buffer, dimensions] : buffer_dimensions(p, input_order)) {
        for (size_t d = 0; d < dimensions; d++) {
            a.push_back("(int)" + buffer + "_min[" + std::to_string(d) + "]");
            a.push_back("(int)" + buffer + "_extent[" + std::to_string(d) + "]");
        }
    }
    return a;
}

/// `main` of a host program up to the kernel: its arguments (instances,
/// seed) and the buffers' setup.
std::string main_prologue(const std::string &name, const HostParts &parts) {
    std::ostringstream out;
    out << "int main(int argc, char **argv) {\n";
    out << "    int64_t instances = argc > 1 ? std::atoll(argv[1]) : 0;\n";
    out << "    if (instances <= 0) instances = " << name << "_default_instances();\n";
    out << "    unsigned seed = argc > 2 ? (unsigned)std::atoi(argv[2]) : 1u;\n";
    out << parts.setup;
    return out.str();
}

}  // namespace

std::string emit_cm_emulation_harness(const sys::SystolicProgram &p, const std::string &name,
                                      const std::vector<std::string> &input_order) {
    int runtime_loop = instances_loop(p.source);
    HostParts parts = host_parts(p, name, input_order);
    std::ostringstream out;
    out << "// " << name << "_emu.cpp: runs the CM kernel " << name << "_genx.cpp on Pulse's CPU emulation of CM\n"
        << "// and compares it with the emitted reference. Generated by Pulse.\n"
        << "// usage: " << name << "_emu [instances (0: the spec's) [seed]]\n";
    out << "#include <algorithm>\n#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n#include <limits>\n#include <random>\n#include "
           "<vector>\n\n";
    out << "#include \"" << name << "_genx.cpp\"\n#include \"" << name << "_reference.h\"\n\n";
    out << host_helpers() << "\n";
    out << main_prologue(name, parts);
    out << "    // The kernel, thread by thread: " << threads_per_group(p, runtime_loop) << " threads per group.\n";
    out << "    const int64_t threads = " << fixed_instances(p, runtime_loop) << " * instances, per_group = "
        << threads_per_group(p, runtime_loop) << ";\n";
    out << "    cm_emu::unbind_all();\n";
    std::vector<std::string> args;
    for (const std::string &in : input_order) {
        out << "    SurfaceIndex surf_" << in << " = cm_emu::bind_buffer(" << in << ".data(), " << in << ".size() * sizeof(" << in
            << "[0]));\n";
        args.push_back("surf_" + in);
    }
    for (const ir::Ure &u : p.source.ures) {
        if (!u.is_output) continue;
        out << "    SurfaceIndex surf_" << u.name << " = cm_emu::bind_buffer(" << u.name << ".data(), " << u.name << ".size() * sizeof("
            << u.name << "[0]));\n";
        args.push_back("surf_" + u.name);
    }
    for (const std::string &a : scalar_arguments(p, input_order)) args.push_back(a);
    out << "    const uint groups[3] = {(uint)((threads + per_group - 1) / per_group), 1, 1}, local[3] = {(uint)per_group, 1, 1};\n";
    out << "    cm_emu::launch(groups, local, [&] { " << name << "(";
    for (size_t i = 0; i < args.size(); i++) out << (i ? ", " : "") << args[i];
    out << "); });\n";
    out << parts.check << "}\n";
    return out.str();
}

std::string emit_cm_host(const sys::SystolicProgram &p, const std::string &name, const std::vector<std::string> &input_order) {
    int runtime_loop = instances_loop(p.source);
    HostParts parts = host_parts(p, name, input_order);
    std::ostringstream out;
    out << "// " << name << "_host.cpp: runs the CM kernel " << name << "_genx.cpp on an Intel GPU through\n"
        << "// Level Zero and checks it against the emitted reference. Generated by Pulse.\n//\n"
        << "// Build (see docs/backends.md, \"CM\"):\n"
        << "//   cmc -march=<GPU, e.g. SKL or DG2> -fcmocl -emit-spirv " << name << "_genx.cpp -o " << name << "_genx.spv\n"
        << "//   c++ -std=c++17 -O2 " << name << "_host.cpp -lze_loader -o " << name << "_host\n"
        << "//   ./" << name << "_host [instances [seed]]    (reads " << name << "_genx.spv from the current directory)\n";
    out << "#include <level_zero/ze_api.h>\n\n";
    out << "#include <algorithm>\n#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <fstream>\n#include "
           "<iterator>\n#include <limits>\n#include <random>\n#include <vector>\n\n";
    out << "#include \"" << name << "_reference.h\"\n\n";
    out << "#define ZE_CHECK(call)                                                           \\\n"
           "    do {                                                                         \\\n"
           "        ze_result_t r_ = (call);                                                 \\\n"
           "        if (r_ != ZE_RESULT_SUCCESS) {                                           \\\n"
           "            std::fprintf(stderr, \"%s failed: 0x%x\\n\", #call, (unsigned)r_);     \\\n"
           "            std::exit(2);                                                        \\\n"
           "        }                                                                        \\\n"
           "    } while (0)\n\n";
    out << host_helpers() << "\n";
    out << main_prologue(name, parts);
    out << R"(    // The first GPU of the first driver.
    ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    ze_driver_handle_t driver;
    ZE_CHECK(zeDriverGet(&count, &driver));
    count = 1;
    ze_device_handle_t device;
    ZE_CHECK(zeDeviceGet(driver, &count, &device));
    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t context;
    ZE_CHECK(zeContextCreate(driver, &context_desc, &context));
    // The kernel: SPIR-V from cmc -fcmocl -emit-spirv, finished by the driver's
    // vector-compute back end (-vc-codegen).
)";
    out << "    std::ifstream spv_file(\"" << name << "_genx.spv\", std::ios::binary);\n";
    out << "    if (!spv_file) { std::fprintf(stderr, \"cannot open " << name << "_genx.spv\\n\"); return 2; }\n";
    out << R"(    std::vector<char> spv((std::istreambuf_iterator<char>(spv_file)), std::istreambuf_iterator<char>());
    ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC};
    module_desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
    module_desc.inputSize = spv.size();
    module_desc.pInputModule = reinterpret_cast<const uint8_t *>(spv.data());
    module_desc.pBuildFlags = "-vc-codegen";
    ze_module_handle_t module;
    ZE_CHECK(zeModuleCreate(context, device, &module_desc, &module, nullptr));
    ze_kernel_desc_t kernel_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC};
)";
    out << "    kernel_desc.pKernelName = \"" << name << "\";\n";
    out << R"(    ze_kernel_handle_t kernel;
    ZE_CHECK(zeKernelCreate(module, &kernel_desc, &kernel));
    // Buffers: shared allocations, passed to the kernel's SurfaceIndex arguments.
    ze_device_mem_alloc_desc_t device_desc = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    uint32_t arg = 0;
    std::vector<void *> allocations;
    auto bind = [&](void *data, size_t bytes, bool copy_in) {
        void *p = nullptr;
        ZE_CHECK(zeMemAllocShared(context, &device_desc, &host_desc, bytes, 64, device, &p));
        if (copy_in) std::memcpy(p, data, bytes);
        ZE_CHECK(zeKernelSetArgumentValue(kernel, arg++, sizeof(p), &p));
        allocations.push_back(p);
        return p;
    };
)";
    for (const std::string &in : input_order) out << "    bind(" << in << ".data(), " << in << ".size() * sizeof(" << in << "[0]), true);\n";
    std::vector<std::string> outputs;
    for (const ir::Ure &u : p.source.ures) {
        if (!u.is_output) continue;
        outputs.push_back(u.name);
        out << "    void *" << u.name << "_device = bind(" << u.name << ".data(), " << u.name << ".size() * sizeof(" << u.name
            << "[0]), true);\n";
    }
    for (const std::string &a : scalar_arguments(p, input_order)) {
        out << "    { int v = " << a << "; ZE_CHECK(zeKernelSetArgumentValue(kernel, arg++, sizeof(v), &v)); }\n";
    }
    out << "    // One thread per array instance, " << threads_per_group(p, runtime_loop) << " per group.\n";
    out << "    const int64_t threads = " << fixed_instances(p, runtime_loop) << " * instances, per_group = "
        << threads_per_group(p, runtime_loop) << ";\n";
    out << R"(    ZE_CHECK(zeKernelSetGroupSize(kernel, (uint32_t)per_group, 1, 1));
    ze_group_count_t groups = {(uint32_t)((threads + per_group - 1) / per_group), 1, 1};
    ze_command_queue_desc_t queue_desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    queue_desc.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    ze_command_list_handle_t list;
    ZE_CHECK(zeCommandListCreateImmediate(context, device, &queue_desc, &list));
    ZE_CHECK(zeCommandListAppendLaunchKernel(list, kernel, &groups, nullptr, 0, nullptr));
    ZE_CHECK(zeCommandListHostSynchronize(list, UINT64_MAX));
)";
    for (const std::string &o : outputs) {
        out << "    std::memcpy(" << o << ".data(), " << o << "_device, " << o << ".size() * sizeof(" << o << "[0]));\n";
    }
    out << R"(    for (void *a : allocations) zeMemFree(context, a);
    zeCommandListDestroy(list);
    zeKernelDestroy(kernel);
    zeModuleDestroy(module);
    zeContextDestroy(context);
)";
    out << parts.check << "}\n";
    return out.str();
}

void emit_cm(const sys::SystolicProgram &p, const std::string &name, const std::vector<std::string> &input_order,
             const std::string &directory, const CmTarget &target) {
    std::string kernel = emit_cm_kernel(p, name, input_order, target);
    make_directory(directory);
    write_file(directory + "/" + name + "_genx.cpp", kernel);
    write_file(directory + "/" + name + "_reference.h", emit_reference_cpp(p.source, name, input_order));
    write_file(directory + "/" + name + "_host.cpp", emit_cm_host(p, name, input_order));
}

void emit_cm_emulation(const sys::SystolicProgram &p, const std::string &name, const std::vector<std::string> &input_order,
                       const std::string &directory, const CmTarget &target) {
    emit_cm(p, name, input_order, directory, target);
    write_file(directory + "/" + name + "_emu.cpp", emit_cm_emulation_harness(p, name, input_order));
    write_cm_emulation_header(directory);
}

std::string write_cm_emulation_header(const std::string &directory) {
    const std::string include_dir = directory + "/cm_emu";
    make_directory(include_dir + "/cm");
    write_file(include_dir + "/cm/cm.h", pulse_cm_emulation_header_text);
    return include_dir;
}

std::string host_cxx_compiler() {
    const char *cxx = std::getenv("CXX");
    if (cxx && *cxx) return cxx;
    return "c++";
}

std::string cm_emulation_compile_command(const std::string &source, const std::string &binary) {
    // -O1: the emulation's element loops need some optimisation to run fast,
    // and -O2 costs more compile time than it saves here.
    const std::string include_dir = (std::filesystem::path(source).parent_path() / "cm_emu").string();
    return host_cxx_compiler() + " -std=c++17 -O1 -Wno-attributes -I '" + include_dir + "' '" + source + "' -o '" + binary +
           "' 2>&1";
}

int run_command(const std::string &command, std::string *output) {
    FILE *pipe = popen(command.c_str(), "r");
    if (!pipe) compile_error("cannot run: ", command);
    std::array<char, 4096> buffer;
    std::string text;
    size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) text.append(buffer.data(), n);
    int status = pclose(pipe);
    if (output) *output = text;
    if (status == -1) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace pulse
