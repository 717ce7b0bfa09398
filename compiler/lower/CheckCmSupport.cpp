#include "lower/CheckCmSupport.h"

#include <sstream>

#include "ir/CmRegisters.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// CM has char, short, int and long long (signed and unsigned), float and
/// double; masks are vectors of ushort.
bool has_cm_type(Type t) {
    if (t.is_bool()) return true;
    if (t.is_float()) return t.bits() == 32 || t.bits() == 64;
    return (t.is_int() || t.is_uint()) && (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64);
}

std::string type_text(Type t) {
    std::ostringstream s;
    s << t;
    return s.str();
}

/// Halide's name for a float math function: sqrt_f32, exp_f64, floor_f16, ...
/// (Pulse's own intrinsics are named pulse.*).
bool is_math_function(const std::string &name) {
    const size_t at = name.rfind("_f");
    if (at == std::string::npos || name.find('.') != std::string::npos) return false;
    const std::string bits = name.substr(at + 2);
    return bits == "16" || bits == "32" || bits == "64";
}

/// The first value of the body CM cannot print: a type with no CM
/// equivalent, a math function, or a floating-point %.
class FindUnsupported : public IRVisitor {
public:
    explicit FindUnsupported(const std::string &kernel) : kernel(kernel) {}
    using IRVisitor::visit;

private:
    const std::string &kernel;

    void check(const Expr &e) {
        if (!has_cm_type(e.type())) {
            refuse(Refusal::UnsupportedByTarget, "", "CM backend: kernel ", kernel, ": element type ", type_text(e.type()),
                   " (in ", e, ") has no CM equivalent; use 8-, 16-, 32- or 64-bit integers, float or double");
        }
    }
    void visit(const LetStmt *op) override {
        check(op->value);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        check(op->value);
        IRVisitor::visit(op);
    }
    void visit(const Cast *op) override {
        check(op);
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        // Halide's math functions (sqrt_f32, exp_f64, floor_f32, ...) are pure
        // extern calls; the CM printer has no vector form for them.
        if (op->call_type == Call::PureExtern && is_math_function(op->name)) {
            refuse(Refusal::UnsupportedByTarget, "", "CM backend: kernel ", kernel, ": the math function ", op->name,
                   " has no CM form in Pulse; emit CUDA for this spec");
        }
        IRVisitor::visit(op);
    }
    void visit(const Mod *op) override {
        if (op->type.is_float()) {
            refuse(Refusal::UnsupportedByTarget, "", "CM backend: kernel ", kernel, ": floating-point % is not supported: ",
                   Expr(op), "; compute it as a - b * floor(a / b)");
        }
        IRVisitor::visit(op);
    }
};

}  // namespace

void check_cm_support(const kir::Kernel &k, const CmTarget &target) {
    if (kir::uses_vectors(k.body)) {
        // Several array instances a lane (CUDA's packed int16): a CM lane is one PE of one instance.
        refuse(Refusal::UnsupportedByTarget, "", "CM backend: kernel ", k.name, " computes with vectors (array instances packed in one ",
               "register), which the CM backend does not emit: emit CUDA for this schedule, or leave the instances unpacked for CM");
    }
    if (k.grid_sync) {
        refuse(Refusal::UnsupportedByTarget, "", "CM backend: kernel ", k.name, " synchronises its instances over the grid ",
               "(gpu_grid_sync), which the CM backend does not have (no grid-wide barrier): drop gpu_grid_sync and the ",
               "reads across instances for CM");
    }
    for (const std::string &f : k.shared_state) {
        refuse(Refusal::UnsupportedByTarget, f, "CM backend: kernel ", k.name, " holds ", f, " in shared memory (", f,
               ".store_in(MemoryType::Shared)), which the CM backend does not have: drop store_in (and gpu_threads) for CM");
    }
    if (k.warps_per_array > 1) {
        refuse(Refusal::UnsupportedByTarget, "", "CM backend: kernel ", k.name, " spreads its array over ", k.warps_per_array,
               " warps (gpu_threads on the space loop); a CM array runs on one hardware thread: drop gpu_threads, ",
               "and an array wider than 32 PEs runs several PEs per lane");
    }
    for (const kir::BufferArg &b : k.buffers) {
        if (b.cache == kir::InputCache::Shared) {
            refuse(Refusal::UnsupportedByTarget, b.name, "CM backend: input ", b.name,
                   " is cached in shared memory (store_in(MemoryType::Shared)), which ",
                   "the CM backend does not stage: cache it in registers or L1");
        }
    }
    const CmRegisterPlan plan = plan_cm_registers(k, target);
    if (plan.bytes > plan.available) refuse(Refusal::ResourceLimit, "", cm_register_error(k, plan, target));
    for (const kir::BufferArg &b : k.buffers) {
        if (b.placement != kir::Placement::Global) {
            refuse(Refusal::UnsupportedByTarget, b.name, "CM backend: ", b.name,
                   " is placed in constant memory, which CM does not have: lower with ",
                   "a CM target (lower_to_target with Target::cm_gen9(), which has no constant bank)");
        }
        if (b.type.bits() != 32) {
            refuse(Refusal::UnsupportedByTarget, b.name, "CM backend: ", b.is_output ? "output " : "input ", b.name, " has ",
                   b.type.bits(), "-bit elements; the dword scattered reads and writes the backend emits move 32-bit elements");
        }
    }
    FindUnsupported find(k.name);
    k.body.accept(&find);
}

}  // namespace pulse
