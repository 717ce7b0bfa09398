#include "lower/PackInstances.h"

#include <map>
#include <set>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Lane k of `e` (a scalar is the same on every lane).
Expr lane_of(const Expr &e, int k) { return e.type().is_scalar() ? e : Shuffle::make_extract_element(e, k); }

/// Whether some lane of the vector condition `c` holds, and whether all do.
Expr any_lane(const Expr &c) {
    Expr any = lane_of(c, 0);
    for (int k = 1; k < c.type().lanes(); k++) any = any || lane_of(c, k);
    return any;
}
Expr all_lanes(const Expr &c) {
    Expr all = lane_of(c, 0);
    for (int k = 1; k < c.type().lanes(); k++) all = all && lane_of(c, k);
    return all;
}

/// The kernel body with every value that depends on the packed grid
/// variable widened to a vector, and every effect masked to the lanes that
/// reach it (PackInstances.h). Register arrays written with vectors, or under
/// a mask, must hold vectors: those not yet in `vector_arrays` are collected
/// in `more_arrays`, and the caller widens again with them.
class PackLanes : public IRMutator {
public:
    PackLanes(const kir::Kernel &kernel, int lanes, const std::set<std::string> &vector_arrays, kir::NameGenerator names,
              const IfThenElse *dispatch)
        : kernel(kernel), lanes(lanes), vector_arrays(vector_arrays), names(std::move(names)), dispatch(dispatch) {}

    std::set<std::string> more_arrays;

private:
    const kir::Kernel &kernel;
    const int lanes;
    const std::set<std::string> &vector_arrays;
    kir::NameGenerator names;
    const IfThenElse *dispatch;                     ///< packed where every lane takes it, else each instance alone
    Scope<Type> vector_vars;                        ///< lets whose values became vectors
    std::map<std::string, Halide::MemoryType> memory;      ///< of each array allocated around
    Expr mask;                                      ///< lanes the code runs on; undefined: all

    Expr widen(const Expr &e) const { return e.type().is_vector() ? e : Broadcast::make(e, lanes); }
    /// a && b, widened where either is a vector; an undefined one is true.
    Expr conjoin(const Expr &a, const Expr &b) const {
        if (!a.defined()) return b;
        if (!b.defined()) return a;
        if (a.type().is_vector() || b.type().is_vector()) return widen(a) && widen(b);
        return a && b;
    }

    [[noreturn]] void refuse(const std::string &what) const {
        compile_error("kernel ", kernel.name, ": vectorize(", kernel.grid[0].var, ", ", lanes, ") cannot pack ", what,
                      ": drop vectorize from the schedule");
    }

    Stmt with_mask(const Expr &m, const Stmt &s) {
        Expr saved = mask;
        mask = m;
        Stmt r = mutate(s);
        mask = saved;
        return r;
    }

    using IRMutator::visit;

    Expr visit(const Variable *op) override {
        if (vector_vars.contains(op->name)) return Variable::make(vector_vars.get(op->name), op->name);
        return op;
    }

    template<typename T>
    Expr binary(const T *op) {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (a.type().is_vector() || b.type().is_vector()) return T::make(widen(a), widen(b));
        if (a.same_as(op->a) && b.same_as(op->b)) return op;
        return T::make(a, b);
    }
    Expr visit(const Add *op) override { return binary(op); }
    Expr visit(const Sub *op) override { return binary(op); }
    Expr visit(const Mul *op) override { return binary(op); }
    Expr visit(const Div *op) override { return binary(op); }
    Expr visit(const Mod *op) override { return binary(op); }
    Expr visit(const Min *op) override { return binary(op); }
    Expr visit(const Max *op) override { return binary(op); }
    Expr visit(const EQ *op) override { return binary(op); }
    Expr visit(const NE *op) override { return binary(op); }
    Expr visit(const LT *op) override { return binary(op); }
    Expr visit(const LE *op) override { return binary(op); }
    Expr visit(const GT *op) override { return binary(op); }
    Expr visit(const GE *op) override { return binary(op); }
    Expr visit(const And *op) override { return binary(op); }
    Expr visit(const Or *op) override { return binary(op); }

    Expr visit(const Select *op) override {
        Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
        if (c.type().is_vector() || t.type().is_vector() || f.type().is_vector()) return Select::make(widen(c), widen(t), widen(f));
        return Select::make(c, t, f);
    }

    Expr visit(const Cast *op) override {
        Expr v = mutate(op->value);
        if (v.type().is_vector()) return Cast::make(op->type.with_lanes(lanes), v);
        return v.same_as(op->value) ? Expr(op) : Cast::make(op->type, v);
    }

    Expr visit(const Let *op) override {
        Expr value = mutate(op->value);
        ScopedBinding<Type> bind(value.type().is_vector(), vector_vars, op->name, value.type());
        return Let::make(op->name, value, mutate(op->body));
    }

    Stmt visit(const LetStmt *op) override {
        Expr value = mutate(op->value);
        ScopedBinding<Type> bind(value.type().is_vector(), vector_vars, op->name, value.type());
        return LetStmt::make(op->name, value, mutate(op->body));
    }

    /// Whether `s` only computes and writes register arrays: no loop, no
    /// branch, no memory access or lane exchange beyond reads of registers.
    bool writes_registers_only(const Stmt &s) const {
        class Check : public IRVisitor {
        public:
            const PackLanes &pack;
            bool yes = true;
            explicit Check(const PackLanes &p) : pack(p) {}
            using IRVisitor::visit;
            void visit(const For *) override { yes = false; }
            void visit(const IfThenElse *) override { yes = false; }
            void visit(const Call *) override { yes = false; }
            void visit(const Load *op) override {
                yes &= pack.in_registers(op->name);
                IRVisitor::visit(op);
            }
            void visit(const Store *op) override {
                yes &= pack.in_registers(op->name);
                IRVisitor::visit(op);
            }
        } check(*this);
        s.accept(&check);
        return check.yes;
    }

    bool in_registers(const std::string &array) const {
        auto it = memory.find(array);
        return it != memory.end() && it->second == Halide::MemoryType::Register;
    }

    /// Element i of register array `array` as an array of vectors.
    Expr vector_index(const Expr &index, const std::string &array) const {
        return Ramp::make(make_const(Int(32), kir::register_index(index, array) * lanes), make_const(Int(32), 1), lanes);
    }

    Expr visit(const Load *op) override {
        if (vector_arrays.count(op->name)) {
            return Load::make(op->type.with_lanes(lanes), op->name, vector_index(op->index, op->name), op->image, op->param,
                              const_true(lanes), ModulusRemainder());
        }
        Expr index = mutate(op->index);
        if (index.type().is_vector() && kernel.block_array(op->name)) {
            // A block's table, only read: each instance its own element (a gather).
            return Load::make(op->type.with_lanes(lanes), op->name, index, op->image, op->param, const_true(lanes), ModulusRemainder());
        }
        if (index.type().is_vector()) refuse("a read of " + op->name + " at an index that differs between the instances");
        return index.same_as(op->index) ? Expr(op) : Load::make(op->type, op->name, index, op->image, op->param, op->predicate, op->alignment);
    }

    Stmt visit(const Store *op) override {
        Expr value = mutate(op->value);
        const bool per_lane = value.type().is_vector() || mask.defined();
        if (!in_registers(op->name)) {
            Expr index = mutate(op->index);
            if (per_lane || index.type().is_vector()) {
                refuse("the values of several instances through shared memory (" + op->name +
                       ": an array over several warps, or a Func in shared memory)");
            }
            return Store::make(op->name, value, index, op->param, op->predicate, op->alignment);
        }
        if (!vector_arrays.count(op->name)) {
            if (per_lane) {
                more_arrays.insert(op->name);  // (this run's result is dropped)
                return op;
            }
            return Store::make(op->name, value, op->index, op->param, op->predicate, op->alignment);
        }
        const Expr index = vector_index(op->index, op->name);
        value = widen(value);
        if (mask.defined()) {
            const Expr old = Load::make(value.type(), op->name, index, Buffer<>(), Parameter(), const_true(lanes), ModulusRemainder());
            value = Select::make(widen(mask), value, old);
        }
        return Store::make(op->name, value, index, Parameter(), const_true(lanes), ModulusRemainder());
    }

    Stmt visit(const Allocate *op) override {
        memory[op->name] = op->memory_type;
        Stmt body = mutate(op->body);
        memory.erase(op->name);
        if (!vector_arrays.count(op->name)) return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, body);
        std::vector<Expr> extents{make_const(Int(32), kir::register_extent(op) * lanes)};
        return Allocate::make(op->name, op->type, op->memory_type, extents, op->condition, body);
    }

    Expr visit(const Call *op) override {
        const std::string &n = op->name;
        if (n == kir::intrinsic::load || n == kir::intrinsic::store) {
            kir::Access a = kir::access_of(op);
            Expr guard = mutate(a.guard);
            // A table's loads are clamped into it: safe on any lane.
            const bool table = n == kir::intrinsic::load && kernel.buffer(a.buffer).table;
            if (!table) guard = conjoin(guard, mask);
            bool vector = guard.type().is_vector();
            std::vector<Expr> coords;
            for (const Expr &c : a.coords) {
                coords.push_back(mutate(c));
                vector = vector || coords.back().type().is_vector();
            }
            if (n == kir::intrinsic::load) return kir::load(vector ? op->type.with_lanes(lanes) : op->type, a.buffer, guard, coords);
            Expr value = mutate(a.value);
            if (vector || value.type().is_vector()) value = widen(value);
            return kir::store(a.buffer, guard, value, coords).as<Evaluate>()->value;
        }
        if (n == kir::intrinsic::warp_all) {
            // Of a vector: each lane's own vote over the warp (KernelIR.h).
            const Expr c = mutate(op->args[0]);
            return Call::make(op->type.with_lanes(c.type().lanes()), n, {c}, op->call_type);
        }
        std::vector<Expr> args;
        bool vector = false;
        for (const Expr &x : op->args) {
            args.push_back(mutate(x));
            vector = vector || args.back().type().is_vector();
        }
        if (!vector) return Call::make(op->type, n, args, op->call_type, op->func, op->value_index, op->image, op->param);
        if (n == kir::intrinsic::chain_source) refuse("a chain of PEs whose condition differs between the instances");
        if (kir::is_lane_exchange(op)) {
            // A vector moves whole; the amount stays a scalar.
            for (size_t i = 1; i < args.size(); i++) {
                if (args[i].type().is_vector()) refuse("a lane exchange by an amount that differs between the instances");
            }
            return Call::make(args[0].type(), n, args, op->call_type);
        }
        if (!op->is_pure()) refuse("the call " + n + " on values that differ between the instances");
        for (Expr &x : args) x = widen(x);
        return Call::make(op->type.with_lanes(lanes), n, args, op->call_type);
    }

    Stmt visit(const IfThenElse *op) override {
        const Expr c = mutate(op->condition);
        if (c.type().is_scalar()) {
            return IfThenElse::make(c, mutate(op->then_case), op->else_case.defined() ? mutate(op->else_case) : Stmt());
        }
        // (The lanes' test bound to a let: extracting a lane of a larger
        // expression makes the simplifier bind its parts in lets of expressions.)
        const std::string name = names.fresh("if", "lanes");
        const Expr lanes_taking = Variable::make(c.type(), name);
        if (op == dispatch) return LetStmt::make(name, c, IfThenElse::make(all_lanes(lanes_taking), mutate(op->then_case), op->else_case));
        Stmt result;
        if (writes_registers_only(op->then_case) && (!op->else_case.defined() || writes_registers_only(op->else_case))) {
            // Register writes alone (a reduction's accumulation under the
            // instance's activity): both branches masked, as selects, with
            // no branch on the lanes (three copies of them at every such
            // test multiplied the code, and a test of the lanes per PE and
            // step cost more than the select it skipped).
            result = with_mask(conjoin(mask, lanes_taking), op->then_case);
            if (op->else_case.defined()) result = Block::make(result, with_mask(conjoin(mask, !lanes_taking), op->else_case));
        } else if (!mask.defined()) {
            // Every lane takes the branch, none does, or some do: both branches, masked.
            Stmt mixed = with_mask(lanes_taking, op->then_case);
            if (op->else_case.defined()) mixed = Block::make(mixed, with_mask(!lanes_taking, op->else_case));
            Stmt none = op->else_case.defined() ? mutate(op->else_case) : Stmt();
            result = IfThenElse::make(all_lanes(lanes_taking), mutate(op->then_case),
                                      IfThenElse::make(any_lane(lanes_taking), mixed, none));
        } else {
            const Expr then_mask = conjoin(mask, lanes_taking);
            result = IfThenElse::make(any_lane(then_mask), with_mask(then_mask, op->then_case));
            if (op->else_case.defined()) {
                const Expr else_mask = conjoin(mask, !lanes_taking);
                result = Block::make(result, IfThenElse::make(any_lane(else_mask), with_mask(else_mask, op->else_case)));
            }
        }
        return LetStmt::make(name, c, result);
    }

    Stmt visit(const For *op) override {
        const Expr min = mutate(op->min), extent = mutate(op->extent);
        if (min.type().is_scalar() && extent.type().is_scalar()) {
            return For::make(op->name, min, extent, op->for_type, op->device_api, mutate(op->body));
        }
        if (op->for_type != ForType::Serial) refuse("an unrolled loop whose bounds differ between the instances");
        // Each lane's range [first, end); the iterations every lane runs,
        // [common_first, common_end), and those some lane runs, [first_of_any, end_of_any).
        const std::string first_name = names.fresh(op->name, "lane_first"), end_name = names.fresh(op->name, "lane_end");
        const Expr first = Variable::make(min.type().with_lanes(lanes), first_name), end = Variable::make(first.type(), end_name);
        Expr first_of_any = lane_of(first, 0), common_first = first_of_any, end_of_any = lane_of(end, 0), common_end = end_of_any;
        for (int k = 1; k < lanes; k++) {
            first_of_any = Min::make(first_of_any, lane_of(first, k));
            common_first = Max::make(common_first, lane_of(first, k));
            end_of_any = Max::make(end_of_any, lane_of(end, k));
            common_end = Min::make(common_end, lane_of(end, k));
        }
        const Expr x = Variable::make(min.type().element_of(), op->name);
        const Expr live = conjoin(mask, widen(x) >= first && widen(x) < end);
        auto loop = [&](const Expr &from, const Expr &to, const Expr &loop_mask) {
            return For::make(op->name, from, Max::make(to - from, make_zero(min.type().element_of())), op->for_type, op->device_api,
                             with_mask(loop_mask, op->body));
        };
        Stmt loops;
        if (!mask.defined()) {
            // Before the common iterations, the common ones unmasked, after them (each lane's in order).
            const Expr head_end = Min::make(common_first, end_of_any), tail_first = Max::make(common_end, common_first);
            loops = Block::make({loop(first_of_any, head_end, live), loop(common_first, common_end, Expr()), loop(tail_first, end_of_any, live)});
        } else {
            loops = loop(first_of_any, end_of_any, live);
        }
        return LetStmt::make(first_name, widen(min), LetStmt::make(end_name, widen(min + extent), loops));
    }
};

}  // namespace

void pack_instances(kir::Kernel &kernel) {
    const int lanes = kernel.packed_lanes;
    if (lanes <= 1) return;
    if (lanes != 2) compile_error("kernel ", kernel.name, ": vectorize by ", lanes, ": two instances a warp are packed, not ", lanes);
    if (kernel.grid.size() != 1) {
        compile_error("kernel ", kernel.name, ": vectorize packs the instances of a grid of one gpu_blocks loop; this one has ",
                      kernel.grid.size(), ": drop vectorize, or map one loop to the grid");
    }
    if (kernel.grid_sync) compile_error("kernel ", kernel.name, ": vectorize cannot pack the instances of a grid-synchronised kernel (gpu_grid_sync)");
    kir::GridLoop &g = kernel.grid[0];
    const LetStmt *binding = kernel.body.as<LetStmt>();
    internal_assert(binding && binding->name == g.var, "pack_instances: the body does not start with the let of the grid variable ", g.var);
    const Expr instances = g.extent;
    g.extent = (instances + make_const(instances.type(), lanes - 1)) / make_const(instances.type(), lanes);
    kir::NameGenerator names(kernel);
    // Warp p runs instances min + lanes p + k.
    const Expr first = cast(Int(32), kir::warp_index()) * lanes + make_const(Int(32), g.min);
    const Expr b = Ramp::make(first, make_const(Int(32), 1), lanes);
    auto inside = [&](const Expr &instance) { return cast(Int(64), instance) < cast(Int(64), instances) + make_const(Int(64), g.min); };
    // Where every lane is an instance of the grid and takes the instance's
    // first test (the buffers cover what it reads: its unguarded version),
    // the lanes run packed. Else (one warp of the grid's last pair, a batch
    // the buffers do not cover) each instance runs in turn: where its own
    // test holds, on the packed code with both lanes set to it (each lane
    // computes and stores the same); where it fails, on the test's else
    // (scalar). The else alone is not right where the test holds: the
    // simplifier folds its guards knowing the test fails there (an output's
    // bounds guard that was the whole test became false, and an instance
    // whose pair partner lay past the grid lost its store).
    Stmt rest = binding->body, packed = rest;
    Expr fast = inside(Variable::make(Int(32), g.var));  // (widened with b by PackLanes)
    const ProducerConsumer *instance = rest.as<ProducerConsumer>();
    const IfThenElse *test = instance ? instance->body.as<IfThenElse>() : rest.as<IfThenElse>();
    auto in_instance = [&](const Stmt &s) { return instance ? ProducerConsumer::make(instance->name, instance->is_producer, s) : s; };
    if (test) {
        fast = fast && test->condition;
        packed = in_instance(test->then_case);
    }
    const std::string round = names.fresh(g.var, "lane");
    const Expr alone = first + Variable::make(Int(32), round);
    Expr alone_packed = inside(alone);
    Stmt alone_else;
    if (test) {
        alone_packed = alone_packed && substitute(g.var, alone, test->condition);
        if (test->else_case.defined()) {
            alone_else = IfThenElse::make(inside(alone), substitute(g.var, alone, in_instance(test->else_case)));
        }
    }
    const Stmt body = LetStmt::make(g.var, b, IfThenElse::make(fast, packed, Evaluate::make(0)));
    kir::on_large_stack([&] {
        std::set<std::string> vector_arrays;
        for (;;) {
            PackLanes pack(kernel, lanes, vector_arrays, names, body.as<LetStmt>()->body.as<IfThenElse>());
            Stmt result = pack.mutate(body);
            if (pack.more_arrays.empty()) {
                // let pair = b; let taken = fast's lanes; let all = every lane takes it;
                // for (round, 0, all ? 1 : lanes): the pair packed, or the round's instance
                // (both lanes) where its test holds, else its test's else.
                const LetStmt *pair_let = result.as<LetStmt>();
                const LetStmt *taken = pair_let ? pair_let->body.as<LetStmt>() : nullptr;
                const IfThenElse *dispatch = taken ? taken->body.as<IfThenElse>() : nullptr;
                internal_assert(dispatch, "pack_instances: no dispatch on the lanes");
                const std::string pair = names.fresh(g.var, "pair"), all = names.fresh(g.var, "all");
                const Type pair_type = pair_let->value.type();
                const Expr all_lanes_take = Variable::make(Bool(), all), pair_value = Variable::make(pair_type, pair);
                // (The round's first instance, then the next one if packed, else the same.)
                const Expr lanes_here = Ramp::make(alone, select(all_lanes_take, 1, 0), lanes);
                Stmt each = IfThenElse::make(all_lanes_take || alone_packed, LetStmt::make(g.var, lanes_here, dispatch->then_case), alone_else);
                each = For::make(round, 0, select(all_lanes_take, 1, lanes), ForType::Serial, DeviceAPI::None, each);
                each = LetStmt::make(all, dispatch->condition, each);
                each = LetStmt::make(taken->name, substitute(g.var, pair_value, taken->value), each);
                kernel.body = LetStmt::make(pair, pair_let->value, each);
                return;
            }
            vector_arrays.insert(pack.more_arrays.begin(), pack.more_arrays.end());
        }
    });
}

}  // namespace pulse
