#include "exec/KernelExecutor.h"

#include <array>
#include <bitset>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "exec/InputRegions.h"
#include "exec/Interpreter.h"
#include "exec/Simulator.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

using kir::warp_size;

/// One lane's value: integers as int64/uint64 (wrapped to their width), floats as double.
union Value {
    int64_t i;
    uint64_t u;
    double f;
};

Value from_int(Type t, int64_t v) {
    Value r;
    if (t.is_float()) {
        r.f = t.bits() == 32 ? (double)(float)v : (double)v;
    } else if (t.is_bool()) {
        r.u = v != 0;
    } else if (t.is_uint()) {
        r.u = t.bits() == 64 ? (uint64_t)v : (uint64_t)v & ((1ull << t.bits()) - 1);
    } else {
        int s = 64 - t.bits();
        r.i = s ? (int64_t)((uint64_t)v << s) >> s : v;
    }
    return r;
}

Value from_uint(Type t, uint64_t v) {
    if (t.is_float()) {
        Value r;
        r.f = t.bits() == 32 ? (double)(float)v : (double)v;
        return r;
    }
    return from_int(t, (int64_t)v);
}

Value from_double(Type t, double v) {
    Value r;
    if (t.is_float()) {
        r.f = t.bits() == 32 ? (double)(float)v : v;
        return r;
    }
    // C conversion (truncation); out-of-range is undefined in C, clamp here.
    if (std::isnan(v)) return from_int(t, 0);
    if (t.is_uint()) return from_uint(t, v <= 0 ? 0 : v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v);
    return from_int(t, v <= -9223372036854775808.0 ? INT64_MIN : v >= 9223372036854775807.0 ? INT64_MAX : (int64_t)v);
}

/// A lane's value of type `t` as a Scalar and back: the executor's
/// arithmetic and conversions are the language's (Scalar.h), not its own.
Scalar to_scalar(Type t, Value v) {
    if (t.is_float()) return t.bits() == 32 ? Scalar::of_float((float)v.f) : Scalar::of_double(v.f);
    if (t.is_uint() || t.is_bool()) return Scalar::of_uint(v.u);
    return Scalar::of_int(v.i);
}

Value from_scalar(Type t, const Scalar &s) {
    Value r;
    if (t.is_float()) r.f = t.bits() == 32 ? (double)s.as_float() : s.as_double();
    else if (t.is_uint() || t.is_bool()) r.u = Scalar::normalize(s, t).as_uint();
    else r.i = Scalar::normalize(s, t).as_int();
    return r;
}

Value convert(Type to, Type from, Value v) { return from_scalar(to, Scalar::cast(to_scalar(from, v), from, to)); }

bool truth(Value v) { return v.u != 0; }

/// "warp.lane" of thread `t` of an array, for messages.
std::string thread_name(int t) { return std::to_string(t / warp_size) + "." + std::to_string(t % warp_size); }

/// What the array instances of a grid-synchronised kernel share: its grid
/// exchange arrays (global memory, with what the race check needs) and the
/// grid barrier. Each instance runs on a thread of its own, so every access
/// takes the lock. Accesses of two instances to one element with no grid
/// barrier between, a read of an element never written, and instances that
/// reach different numbers of grid barriers are errors.
class GridState {
public:
    /// Thrown in the other instances once one has failed.
    struct Stopped {};

    GridState(const kir::Kernel &k, int64_t instance_count) : kernel(k), instances(instance_count) {
        for (const kir::GridExchange &x : kernel.grid_exchanges) {
            Array &a = arrays[x.name];
            const size_t n = (size_t)(x.slots * x.per_instance * instances);
            a.values.resize(n);
            a.writer.assign(n, -1);
            a.write_epoch.assign(n, 0);
            a.reader.assign(n, -1);
            a.read_epoch.assign(n, 0);
        }
    }

    Value load(const std::string &name, int64_t i, int64_t instance, const std::string &thread) {
        std::lock_guard<std::mutex> lock(mutex);
        Array &a = element_of(name, i, instance, thread);
        if (a.writer[i] < 0) fail_locked("instance ", instance, " thread ", thread, " reads grid exchange ", name, "[", i, "] before any write");
        if (a.write_epoch[i] == epoch && a.writer[i] != instance) race(name, i, a.writer[i], "wrote", instance, "reads");
        a.reader[i] = instance;
        a.read_epoch[i] = epoch;
        return a.values[i];
    }

    void store(const std::string &name, int64_t i, Value v, int64_t instance, const std::string &thread) {
        std::lock_guard<std::mutex> lock(mutex);
        Array &a = element_of(name, i, instance, thread);
        if (a.write_epoch[i] == epoch && a.writer[i] >= 0 && a.writer[i] != instance) race(name, i, a.writer[i], "wrote", instance, "writes");
        if (a.read_epoch[i] == epoch && a.reader[i] != instance) race(name, i, a.reader[i], "read", instance, "writes");
        a.values[i] = v;
        a.writer[i] = instance;
        a.write_epoch[i] = epoch;
    }

    /// The grid barrier: returns once every instance has arrived.
    void arrive() {
        std::unique_lock<std::mutex> lock(mutex);
        if (failed) throw Stopped{};
        const uint64_t mine = epoch;
        if (++arrived + finished == instances) {
            if (finished > 0) fail_locked(finished, " instance(s) finished without reaching a grid barrier the others wait at");
            arrived = 0;
            epoch++;
            wake.notify_all();
            return;
        }
        wake.wait(lock, [&] { return epoch != mine || failed; });
        if (failed) throw Stopped{};
    }

    /// An instance has run its body to the end.
    void finish() {
        std::lock_guard<std::mutex> lock(mutex);
        finished++;
        if (arrived > 0 && arrived + finished == instances) {
            fail_locked("an instance finished while ", arrived, " wait at a grid barrier it never reached");
        }
    }

    /// Another instance failed: the others stop at their next grid operation.
    void abandon() {
        std::lock_guard<std::mutex> lock(mutex);
        failed = true;
        wake.notify_all();
    }

private:
    struct Array {
        std::vector<Value> values;
        std::vector<int64_t> writer, reader;        ///< instance; -1: none
        std::vector<uint64_t> write_epoch, read_epoch;
    };
    const kir::Kernel &kernel;
    const int64_t instances;
    std::mutex mutex;
    std::condition_variable wake;
    std::unordered_map<std::string, Array> arrays;
    int64_t arrived = 0, finished = 0;
    uint64_t epoch = 1;  ///< grid barriers passed + 1
    bool failed = false;

    template<typename... Args>
    [[noreturn]] void fail_locked(const Args &...args) {
        failed = true;
        wake.notify_all();
        evaluation_error("kernel ", kernel.name, ": ", args...);
    }

    Array &element_of(const std::string &name, int64_t i, int64_t instance, const std::string &thread) {
        if (failed) throw Stopped{};
        Array &a = arrays.at(name);
        if (i < 0 || i >= (int64_t)a.values.size()) {
            fail_locked("instance ", instance, " thread ", thread, " indexes grid exchange ", name, " at ", i, ", outside [0, ",
                        a.values.size(), ")");
        }
        return a;
    }

    [[noreturn]] void race(const std::string &name, int64_t i, int64_t earlier, const char *earlier_did, int64_t later, const char *later_does) {
        fail_locked("race on grid exchange ", name, "[", i, "]: instance ", earlier, " ", earlier_did, " it and instance ", later, " ",
                    later_does, " it with no grid barrier between");
    }
};

/// Runs one array instance after another, its threads in lock step. A
/// template on the most threads an array may have, so that one-warp arrays
/// (most kernels, and the test suite's bulk) keep 32-wide per-thread values;
/// threads past the kernel's array_threads() never exist and stay masked off.
template<int MaxThreads>
class Executor {
    using Lanes = std::array<Value, MaxThreads>;
    using Mask = std::array<bool, MaxThreads>;
    using ThreadSet = std::bitset<MaxThreads>;

public:
    /// execute_kernel has checked that the kernel's arrays fit MaxThreads.
    /// `grid`: the state the instances of a grid-synchronised kernel share
    /// (each instance then runs on its own thread, in its own Executor).
    Executor(const kir::Kernel &k, Buffers &b, GridState *g = nullptr)
        : kernel(k), buffers(b), grid(g), thread_count(k.array_threads()) {}

    /// The number of array instances of the kernel on these buffers.
    int64_t instance_count() {
        bind_buffer_fields();
        return eval(kernel.warp_count(), 0).i;
    }

    /// Runs instances [first, last) (all: last < 0).
    void run(const Progress &progress, int64_t first = 0, int64_t last = -1) {
        bind_buffer_fields();
        Mask all{};
        Lanes lanes{}, warps_in_array{};
        for (int t = 0; t < threads(); t++) {
            all[t] = true;
            lanes[t] = from_int(Int(32), t % warp_size);
            warps_in_array[t] = from_int(Int(32), t / warp_size);
        }
        push(kir::lane_var, lanes);
        push(kir::array_warp_var, warps_in_array);
        const int64_t instances = eval(kernel.warp_count(), 0).i;
        if (last < 0) last = instances;
        run_block_setup();
        for (int64_t w = first; w < last; w++) {
            if (progress) progress(w, instances);
            current_instance = w;
            bind_uniform(kir::warp_index_var, Int(64), w);
            exec(kernel.body, all);
            pop(kir::warp_index_var);
        }
    }

private:
    bool fields_bound = false;

    /// The block arrays, filled by Kernel::block_setup as every warp of a
    /// block fills them (block.warp bound in turn, lane by lane), then a
    /// barrier. The body only reads them, so one filling serves every
    /// instance this executor runs.
    void run_block_setup() {
        if (kernel.block_arrays.empty()) return;
        for (const kir::BlockArray &a : kernel.block_arrays) shared[a.name] = SharedArray::unwritten(a.elements);
        Mask warp{};
        for (int t = 0; t < warp_size; t++) warp[t] = true;
        for (int w = 0; w < kernel.block_warps(); w++) {
            bind_uniform(kir::block_warp_var, Int(32), w);
            exec(kernel.block_setup, warp);
            pop(kir::block_warp_var);
            // Another warp of the block: its lanes are other threads.
            epoch++;
        }
        epoch++;
        filling_block_arrays = false;
    }
    bool filling_block_arrays = true;

    /// BUFFER.min/extent/stride.D of every buffer, checked against the kernel's arguments.
    void bind_buffer_fields() {
        if (fields_bound) return;
        fields_bound = true;
        for (const kir::BufferArg &arg : kernel.buffers) {
            auto it = buffers.find(arg.name);
            if (it == buffers.end()) evaluation_error("kernel ", kernel.name, ": no buffer given for ", arg.name);
            const Buffer<> &buf = it->second;
            if (buf.type() != arg.type || buf.dimensions() != arg.dimensions) {
                evaluation_error("kernel ", kernel.name, ": buffer ", arg.name, " has the wrong type or dimensions");
            }
            if (kernel.dense_first_dimension && arg.placement == kir::Placement::Global && arg.dimensions > 0 &&
                buf.number_of_elements() > 0 && buf.dim(0).stride() != 1) {
                evaluation_error("kernel ", kernel.name, ": buffer ", arg.name, " has stride ", buf.dim(0).stride(),
                                 " in dimension 0; the kernel reads and writes dimension 0 as dense (stride 1), as the host "
                                 "function requires: give a buffer whose first dimension is contiguous");
            }
            for (int d = 0; d < arg.dimensions; d++) {
                bind_uniform(kir::BufferField{arg.name, kir::BufferField::Min, d}.name(), Int(64), buf.dim(d).min());
                bind_uniform(kir::BufferField{arg.name, kir::BufferField::Extent, d}.name(), Int(64), buf.dim(d).extent());
                bind_uniform(kir::BufferField{arg.name, kir::BufferField::Stride, d}.name(), Int(64), buf.dim(d).stride());
                if (arg.placement == kir::Placement::Constant &&
                    (arg.region_min[d] < buf.dim(d).min() ||
                     arg.region_min[d] + arg.region_extent[d] > buf.dim(d).min() + buf.dim(d).extent())) {
                    evaluation_error("kernel ", kernel.name, ": input ", arg.name, " does not cover the region [",
                                     arg.region_min[d], ", ", arg.region_min[d] + arg.region_extent[d], ") of dimension ", d,
                                     " that the kernel copies to constant memory");
                }
            }
        }
        // Each input covers what the outputs' extents need (as the host function checks).
        for (const kir::BufferArg &arg : kernel.buffers) {
            for (size_t d = 0; d < arg.required.size(); d++) {
                if (!arg.required[d] || !eval(arg.required[d]->when, 0).i) continue;
                const int64_t lo = eval(arg.required[d]->min, 0).i, hi = eval(arg.required[d]->max, 0).i;
                const Buffer<> &buf = buffers.at(arg.name);
                if (lo < buf.dim((int)d).min() || hi > buf.dim((int)d).max()) {
                    evaluation_error("kernel ", kernel.name, ": input ", arg.name, " holds [", buf.dim((int)d).min(), ", ",
                                     buf.dim((int)d).max(), "] in dimension ", d, ", but the outputs' extents read [", lo, ", ", hi,
                                     "]: give it those indices");
                }
            }
        }
    }

    const kir::Kernel &kernel;
    Buffers &buffers;
    GridState *const grid;
    int64_t current_instance = 0;
    std::unordered_map<std::string, std::vector<Lanes>> env;
    /// Register arrays (Allocate Register): element -> its value on each thread.
    std::unordered_map<std::string, std::vector<Lanes>> registers;
    /// A shared-memory array (Allocate GPUShared): one copy per array
    /// instance, with what the race check needs per element.
    struct SharedArray {
        std::vector<Value> values;
        std::vector<int> writer;              ///< thread that last wrote the element; -1: never written
        std::vector<uint64_t> write_epoch;    ///< epoch of that write
        std::vector<uint64_t> read_epoch;     ///< epoch `readers` belongs to
        std::vector<ThreadSet> readers;       ///< threads that read the element in read_epoch
        /// `n` elements, none written yet.
        static SharedArray unwritten(int64_t n) {
            SharedArray array;
            array.values.resize(n);
            array.writer.assign(n, -1);
            array.write_epoch.assign(n, 0);
            array.read_epoch.assign(n, 0);
            array.readers.resize(n);
            return array;
        }
    };
    std::unordered_map<std::string, SharedArray> shared;
    /// Barriers passed so far, plus one: accesses in the same epoch have no
    /// barrier between them (0 marks "never" in SharedArray).
    uint64_t epoch = 1;
    bool full_array = true;  ///< no thread of the array masked off: lane exchanges and barriers allowed
    const int thread_count;

    /// Threads of the array; a constant for one-warp arrays, so their loops stay as tight as before.
    int threads() const { return MaxThreads == warp_size ? warp_size : thread_count; }

    void push(const std::string &name, const Lanes &v) { env[name].push_back(v); }
    void pop(const std::string &name) { env[name].pop_back(); }
    void bind_uniform(const std::string &name, Type t, int64_t v) {
        Lanes l;
        l.fill(from_int(t, v));
        push(name, l);
    }

    Lanes eval_lanes(const Expr &e) {
        Lanes r;
        for (int l = 0; l < threads(); l++) r[l] = eval(e, l);
        return r;
    }

    void exec(const Stmt &s, const Mask &mask) {
        if (const LetStmt *op = s.as<LetStmt>()) {
            // Long chains of lets: iterate, then pop in reverse.
            std::vector<std::string> names;
            Stmt body = s;
            while (const LetStmt *let = body.as<LetStmt>()) {
                push(let->name, eval_lanes(let->value));
                names.push_back(let->name);
                body = let->body;
            }
            exec(body, mask);
            for (size_t i = names.size(); i-- > 0;) pop(names[i]);
            (void)op;
            return;
        }
        if (const Block *op = s.as<Block>()) {
            exec(op->first, mask);
            exec(op->rest, mask);
            return;
        }
        if (const ProducerConsumer *op = s.as<ProducerConsumer>()) return exec(op->body, mask);
        if (const IfThenElse *op = s.as<IfThenElse>()) {
            if (op->condition.type().is_vector()) {
                evaluation_error("kernel ", kernel.name, ": the condition of an if is a vector (a test per lane of a value belongs in a select): ",
                                 op->condition);
            }
            Mask then_mask{}, else_mask{};
            bool any_then = false, any_else = false, diverges = false;
            for (int l = 0; l < threads(); l++) {
                bool c = mask[l] && truth(eval(op->condition, l));
                then_mask[l] = c;
                else_mask[l] = mask[l] && !c;
                any_then |= c, any_else |= else_mask[l];
            }
            diverges = any_then && any_else;
            bool saved = full_array;
            if (any_then) {
                full_array = saved && !diverges && then_mask == mask;
                exec(op->then_case, then_mask);
            }
            if (any_else && op->else_case.defined()) {
                full_array = saved && !diverges && else_mask == mask;
                exec(op->else_case, else_mask);
            }
            full_array = saved;
            return;
        }
        if (const For *op = s.as<For>()) {
            int first = -1;
            for (int l = 0; l < threads() && first < 0; l++) if (mask[l]) first = l;
            if (first < 0) return;
            Value lo = eval(op->min, first), n = eval(op->extent, first);
            for (int l = 0; l < threads(); l++) {
                if (mask[l] && (eval(op->min, l).i != lo.i || eval(op->extent, l).i != n.i)) {
                    evaluation_error("kernel ", kernel.name, ": loop ", op->name, " has different bounds on threads ",
                                     thread_name(first), " and ", thread_name(l));
                }
            }
            for (int64_t i = 0; i < n.i; i++) {
                bind_uniform(op->name, op->min.type(), lo.i + i);
                exec(op->body, mask);
                pop(op->name);
            }
            return;
        }
        if (const Allocate *op = s.as<Allocate>()) {
            if (op->memory_type == Halide::MemoryType::GPUShared) return allocate_shared(op, mask);
            if (op->memory_type != Halide::MemoryType::Register || op->extents.size() != 1 || !as_const_int(op->extents[0])) {
                evaluation_error("kernel ", kernel.name, ": ", op->name, " is not a register array of constant size");
            }
            registers[op->name] = std::vector<Lanes>(*as_const_int(op->extents[0]));
            exec(op->body, mask);
            registers.erase(op->name);
            return;
        }
        if (const Store *op = s.as<Store>()) {
            if (kernel.grid_exchange(op->name)) {
                for (int l = 0; l < threads(); l++) {
                    if (mask[l]) grid_state().store(op->name, eval(op->index, l).i, eval(op->value, l), current_instance, thread_name(l));
                }
                return;
            }
            if (!shared.empty()) {
                auto it = shared.find(op->name);
                if (it != shared.end()) {
                    if (!filling_block_arrays && kernel.block_array(op->name)) {
                        evaluation_error("kernel ", kernel.name, ": the body stores to block array ", op->name,
                                         ", which only the block setup fills");
                    }
                    return store_shared(op, it->second, mask);
                }
            }
            if (op->value.type().is_vector()) {
                // A vector to its lanes' elements (a dense ramp of indices).
                for (int l = 0; l < threads(); l++) {
                    for (int k = 0; mask[l] && k < op->value.type().lanes(); k++) {
                        register_element_at(op->name, eval_lane(op->index, l, k).i, l) = eval_lane(op->value, l, k);
                    }
                }
                return;
            }
            for (int l = 0; l < threads(); l++) {
                if (mask[l]) register_element(op->name, op->index, l) = eval(op->value, l);
            }
            return;
        }
        if (const Evaluate *op = s.as<Evaluate>()) {
            const Call *c = op->value.as<Call>();
            if (c && c->name == kir::intrinsic::store) {
                for (int l = 0; l < threads(); l++) {
                    if (mask[l]) store(c, l);
                }
                return;
            }
            if (c && c->name == kir::intrinsic::barrier) {
                // __syncthreads in divergent code hangs or corrupts a block on the GPU.
                if (!full_array) evaluation_error("kernel ", kernel.name, ": barrier inside divergent code");
                epoch++;
                return;
            }
            if (c && c->name == kir::intrinsic::grid_barrier) {
                // grid.sync() waits for every thread of every block.
                if (!full_array) evaluation_error("kernel ", kernel.name, ": grid barrier inside divergent code");
                grid_state().arrive();
                epoch++;
                return;
            }
            if (is_const(op->value)) return;
            evaluation_error("kernel ", kernel.name, ": cannot execute ", s);
        }
        evaluation_error("kernel ", kernel.name, ": cannot execute statement ", s);
    }

    GridState &grid_state() {
        if (!grid) evaluation_error("kernel ", kernel.name, ": grid barriers or grid exchange arrays in a kernel without grid_sync");
        return *grid;
    }

    /// Element `index` of a register array on thread `l`; checks the bounds.
    Value &register_element(const std::string &name, const Expr &index, int l) {
        if (index.type().is_vector()) evaluation_error("kernel ", kernel.name, ": a vector index of register array ", name, " read as a scalar");
        return register_element_at(name, eval(index, l).i, l);
    }

    /// Element i of a register array on thread `l`; checks the bounds.
    Value &register_element_at(const std::string &name, int64_t i, int l) {
        auto it = registers.find(name);
        if (it == registers.end()) evaluation_error("kernel ", kernel.name, ": register array ", name, " is not allocated here");
        if (i < 0 || i >= (int64_t)it->second.size()) {
            evaluation_error("kernel ", kernel.name, ": thread ", thread_name(l), " indexes register array ", name, " at ", i,
                             ", outside [0, ", it->second.size(), ")");
        }
        return it->second[i][l];
    }

    /// One shared array for the instance, its elements unwritten; the
    /// extent must agree on every thread that reaches the allocation.
    void allocate_shared(const Allocate *op, const Mask &mask) {
        if (op->extents.size() != 1) evaluation_error("kernel ", kernel.name, ": shared array ", op->name, " is not one-dimensional");
        int64_t extent = -1;
        int first = -1;
        for (int l = 0; l < threads(); l++) {
            if (!mask[l]) continue;
            int64_t e = eval(op->extents[0], l).i;
            if (first < 0) {
                first = l, extent = e;
            } else if (e != extent) {
                evaluation_error("kernel ", kernel.name, ": shared array ", op->name, " has extent ", extent, " on thread ",
                                 thread_name(first), " and ", e, " on thread ", thread_name(l));
            }
        }
        if (first < 0) return;
        if (extent < 0) evaluation_error("kernel ", kernel.name, ": shared array ", op->name, " has a negative extent ", extent);
        shared[op->name] = SharedArray::unwritten(extent);
        exec(op->body, mask);
        shared.erase(op->name);
    }

    /// The element index of an access to a shared array by thread `l`; checks the bounds.
    int64_t shared_index(const std::string &name, const SharedArray &array, const Expr &index, int l) {
        int64_t i = eval(index, l).i;
        if (i < 0 || i >= (int64_t)array.values.size()) {
            evaluation_error("kernel ", kernel.name, ": thread ", thread_name(l), " indexes shared array ", name, " at ", i,
                             ", outside [0, ", array.values.size(), ")");
        }
        return i;
    }

    void race(const std::string &name, int64_t i, int earlier, const char *earlier_did, int later, const char *later_does) {
        evaluation_error("kernel ", kernel.name, ": race on shared ", name, "[", i, "]: thread ", thread_name(earlier), " ",
                         earlier_did, " it and thread ", thread_name(later), " ", later_does,
                         " it with no barrier between (threads as warp.lane)");
    }

    Value load_shared(const std::string &name, SharedArray &array, const Expr &index, int l) {
        int64_t i = shared_index(name, array, index, l);
        if (array.writer[i] < 0) {
            evaluation_error("kernel ", kernel.name, ": thread ", thread_name(l), " reads shared ", name, "[", i, "] before any write");
        }
        if (array.write_epoch[i] == epoch && array.writer[i] != l) race(name, i, array.writer[i], "wrote", l, "reads");
        if (array.read_epoch[i] != epoch) {
            array.read_epoch[i] = epoch;
            array.readers[i].reset();
        }
        array.readers[i].set(l);
        return array.values[i];
    }

    /// The threads of a Store run in lock step: every thread's index and
    /// value are read before any element is written.
    void store_shared(const Store *op, SharedArray &array, const Mask &mask) {
        std::array<int64_t, MaxThreads> index;
        Lanes value;
        for (int l = 0; l < threads(); l++) {
            if (!mask[l]) continue;
            index[l] = shared_index(op->name, array, op->index, l);
            value[l] = eval(op->value, l);
        }
        for (int l = 0; l < threads(); l++) {
            if (!mask[l]) continue;
            int64_t i = index[l];
            if (array.write_epoch[i] == epoch && array.writer[i] >= 0 && array.writer[i] != l) {
                race(op->name, i, array.writer[i], "wrote", l, "writes");
            }
            if (array.read_epoch[i] == epoch) {
                ThreadSet others = array.readers[i];
                others.reset(l);
                if (others.any()) {
                    int reader = 0;
                    while (!others.test(reader)) reader++;
                    race(op->name, i, reader, "read", l, "writes");
                }
            }
            array.values[i] = value[l];
            array.writer[i] = l;
            array.write_epoch[i] = epoch;
        }
    }

    /// The element (coords) of a buffer, for lane `l`; checks the bounds.
    void *element(const kir::Access &a, int l) {
        std::vector<int64_t> coords;
        for (const Expr &c : a.coords) coords.push_back(eval(c, l).i);
        return element_at(a, coords, l);
    }

    /// The element of the buffer `a` accesses at `coords`, for lane `l`; checks the bounds.
    void *element_at(const kir::Access &a, const std::vector<int64_t> &coords, int l) {
        const kir::BufferArg &arg = kernel.buffer(a.buffer);
        Buffer<> &buf = buffers.at(a.buffer);
        std::vector<int> pos;
        for (int d = 0; d < arg.dimensions; d++) {
            int64_t c = coords[d];
            bool inside = arg.placement == kir::Placement::Constant
                              ? c >= arg.region_min[d] && c < arg.region_min[d] + arg.region_extent[d]
                              : c >= buf.dim(d).min() && c <= buf.dim(d).max();
            if (!inside) {
                evaluation_error("kernel ", kernel.name, ": thread ", thread_name(l), " accesses ", a.buffer, " at ", c, " in dimension ", d,
                                 ", outside the buffer; its guard ", a.guard, " does not protect it");
            }
            pos.push_back((int)c);
        }
        int64_t offset = 0;
        for (int d = 0; d < arg.dimensions; d++) offset += (int64_t)(pos[d] - buf.dim(d).min()) * buf.dim(d).stride();
        return (uint8_t *)buf.raw_buffer()->host + offset * buf.type().bytes();
    }

    static Value read(Type t, const void *p) {
        switch (t.code()) {
        case Type::Float:
            return from_double(t, t.bits() == 32 ? (double)*(const float *)p : *(const double *)p);
        case Type::UInt:
            switch (t.bits()) {
            case 1:
            case 8: return from_uint(t, *(const uint8_t *)p);
            case 16: return from_uint(t, *(const uint16_t *)p);
            case 32: return from_uint(t, *(const uint32_t *)p);
            default: return from_uint(t, *(const uint64_t *)p);
            }
        default:
            switch (t.bits()) {
            case 8: return from_int(t, *(const int8_t *)p);
            case 16: return from_int(t, *(const int16_t *)p);
            case 32: return from_int(t, *(const int32_t *)p);
            default: return from_int(t, *(const int64_t *)p);
            }
        }
    }

    static void write(Type t, void *p, Value v) {
        if (t.is_float()) {
            if (t.bits() == 32) *(float *)p = (float)v.f;
            else *(double *)p = v.f;
            return;
        }
        switch (t.bits()) {
        case 1:
        case 8: *(uint8_t *)p = (uint8_t)v.u; break;
        case 16: *(uint16_t *)p = (uint16_t)v.u; break;
        case 32: *(uint32_t *)p = (uint32_t)v.u; break;
        default: *(uint64_t *)p = v.u; break;
        }
    }

    void store(const Call *c, int l) {
        kir::Access a = kir::access_of(c);
        if (a.value.type().is_vector()) {
            // Each lane of the vector to its own element, under its own guard.
            for (int k = 0; k < a.value.type().lanes(); k++) {
                if (!truth(eval_lane(a.guard, l, k))) continue;
                std::vector<int64_t> coords;
                for (const Expr &x : a.coords) coords.push_back(eval_lane(x, l, k).i);
                write(a.value.type().element_of(), element_at(a, coords, l), eval_lane(a.value, l, k));
            }
            return;
        }
        if (!truth(eval(a.guard, l))) return;
        Value v = eval(a.value, l);
        write(a.value.type(), element(a, l), v);
    }

    // Vectors (Halide's vector types: the lanes of a value, e.g. two array
    // instances' int16 in one 32-bit register). A vector's lanes share one
    // Value, lane k in bits [k w, (k + 1) w) with w = 64 / lanes, so that a
    // vector moves as one value (a shuffle, a let, a register); its
    // arithmetic is the language's on each lane (Scalar.h).

    /// Bits of one lane of a vector of type `t` in its Value.
    static int lane_bits(Type t) { return 64 / t.lanes(); }

    /// Lane k of the vector `v` of type `t`.
    static Value lane_of(Type t, Value v, int k) {
        const int w = lane_bits(t);
        const uint64_t bits = w == 64 ? v.u : (v.u >> (k * w)) & ((1ull << w) - 1);
        return t.is_uint() || t.is_bool() ? from_uint(t.element_of(), bits) : from_int(t.element_of(), (int64_t)bits);
    }

    /// The Value of the vector `e` on thread `l`, its lanes packed.
    Value eval_vector(const Expr &e, int l) {
        const Type t = e.type();
        if (t.is_float() || t.bits() > lane_bits(t)) {
            evaluation_error("kernel ", kernel.name, ": the vector type ", t, " of ", e, " has no form in the executor (integer or bool lanes of ",
                             lane_bits(t), " bits or fewer)");
        }
        const int w = lane_bits(t);
        Value r;
        r.u = 0;
        for (int k = 0; k < t.lanes(); k++) {
            uint64_t bits = eval_lane(e, l, k).u;
            if (w < 64) bits &= (1ull << w) - 1;
            r.u |= bits << (k * w);
        }
        return r;
    }

    /// Lane k of `e` on thread `l` (a scalar `e` is the same on every lane).
    Value eval_lane(const Expr &e, int l, int k) {
        const Type t = e.type();
        if (t.is_scalar()) return eval(e, l);
        const Type et = t.element_of();
        if (const Variable *op = e.as<Variable>()) return lane_of(t, lookup(op->name, l), k);
        if (const Broadcast *op = e.as<Broadcast>()) return eval_lane(op->value, l, k % op->value.type().lanes());
        if (const Ramp *op = e.as<Ramp>()) {
            if (op->base.type().is_vector()) evaluation_error("kernel ", kernel.name, ": a ramp of vectors: ", e);
            const Scalar base = to_scalar(et, eval(op->base, l)), stride = to_scalar(et, eval(op->stride, l));
            return from_scalar(et, binary_fn(BinaryOp::Add, et)(base, binary_fn(BinaryOp::Mul, et)(stride, Scalar::of_int(k))));
        }
        if (const Shuffle *op = e.as<Shuffle>()) {
            int index = op->indices[k];
            for (const Expr &v : op->vectors) {
                if (index < v.type().lanes()) return eval_lane(v, l, index);
                index -= v.type().lanes();
            }
        }
        if (const Cast *op = e.as<Cast>()) return convert(et, op->value.type().element_of(), eval_lane(op->value, l, k));
        auto lane_binary = [&](BinaryOp fn, const Expr &a, const Expr &b) {
            return from_scalar(et, binary_fn(fn, et)(to_scalar(et, eval_lane(a, l, k)), to_scalar(et, eval_lane(b, l, k))));
        };
        if (const Add *op = e.as<Add>()) return lane_binary(BinaryOp::Add, op->a, op->b);
        if (const Sub *op = e.as<Sub>()) return lane_binary(BinaryOp::Sub, op->a, op->b);
        if (const Mul *op = e.as<Mul>()) return lane_binary(BinaryOp::Mul, op->a, op->b);
        if (const Div *op = e.as<Div>()) return lane_binary(BinaryOp::Div, op->a, op->b);
        if (const Mod *op = e.as<Mod>()) return lane_binary(BinaryOp::Mod, op->a, op->b);
        if (const Min *op = e.as<Min>()) return lane_binary(BinaryOp::Min, op->a, op->b);
        if (const Max *op = e.as<Max>()) return lane_binary(BinaryOp::Max, op->a, op->b);
        if (const Call *op = e.as<Call>()) {
            if (BinaryOp saturating; saturating_op(op, &saturating)) return lane_binary(saturating, op->args[0], op->args[1]);
        }
        auto lane_compare = [&](const Expr &a, const Expr &b, auto cmp) {
            const Type at = a.type().element_of();
            const Value x = eval_lane(a, l, k), y = eval_lane(b, l, k);
            Value r;
            if (at.is_uint() || at.is_bool()) r.u = cmp(x.u, y.u);
            else r.u = cmp(x.i, y.i);
            return r;
        };
        if (const EQ *op = e.as<EQ>()) return lane_compare(op->a, op->b, [](auto x, auto y) { return x == y; });
        if (const NE *op = e.as<NE>()) return lane_compare(op->a, op->b, [](auto x, auto y) { return x != y; });
        if (const LT *op = e.as<LT>()) return lane_compare(op->a, op->b, [](auto x, auto y) { return x < y; });
        if (const LE *op = e.as<LE>()) return lane_compare(op->a, op->b, [](auto x, auto y) { return x <= y; });
        if (const GT *op = e.as<GT>()) return lane_compare(op->a, op->b, [](auto x, auto y) { return x > y; });
        if (const GE *op = e.as<GE>()) return lane_compare(op->a, op->b, [](auto x, auto y) { return x >= y; });
        auto boolean = [](bool b) {
            Value r;
            r.u = b;
            return r;
        };
        if (const And *op = e.as<And>()) return boolean(truth(eval_lane(op->a, l, k)) && truth(eval_lane(op->b, l, k)));
        if (const Or *op = e.as<Or>()) return boolean(truth(eval_lane(op->a, l, k)) || truth(eval_lane(op->b, l, k)));
        if (const Not *op = e.as<Not>()) return boolean(!truth(eval_lane(op->a, l, k)));
        if (const Select *op = e.as<Select>()) {
            return truth(eval_lane(op->condition, l, k)) ? eval_lane(op->true_value, l, k) : eval_lane(op->false_value, l, k);
        }
        if (const Load *op = e.as<Load>()) {
            if (kernel.block_array(op->name)) {
                // A gather from a block's table (read only after the block setup).
                SharedArray &array = shared.at(op->name);
                const int64_t i = eval_lane(op->index, l, k).i;
                if (i < 0 || i >= (int64_t)array.values.size() || array.writer[i] < 0) {
                    evaluation_error("kernel ", kernel.name, ": thread ", thread_name(l), " reads block array ", op->name, "[", i,
                                     "], outside it or never written");
                }
                return array.values[i];
            }
            if (kernel.grid_exchange(op->name) || shared.count(op->name)) {
                evaluation_error("kernel ", kernel.name, ": a vector read of shared or grid memory: ", e);
            }
            return register_element_at(op->name, eval_lane(op->index, l, k).i, l);
        }
        if (const Let *op = e.as<Let>()) {
            push(op->name, eval_lanes(op->value));
            Value r = eval_lane(op->body, l, k);
            pop(op->name);
            return r;
        }
        if (const Call *op = e.as<Call>()) {
            if (op->name == kir::intrinsic::load) {
                kir::Access a = kir::access_of(op);
                if (!truth(eval_lane(a.guard, l, k))) return from_int(et, 0);
                std::vector<int64_t> coords;
                for (const Expr &x : a.coords) coords.push_back(eval_lane(x, l, k).i);
                return read(et, element_at(a, coords, l));
            }
            if (op->name == kir::intrinsic::warp_all) {
                // Each lane's own vote over the warp.
                require_full_array(op);
                const int warp_base = l - l % warp_size;
                for (int w = 0; w < warp_size; w++) {
                    if (!truth(eval_lane(op->args[0], warp_base + w, k))) return from_int(Bool(), 0);
                }
                return from_int(Bool(), 1);
            }
            // A lane exchange moves the whole vector (call() reads the
            // other thread's packed value).
            if (op->name == kir::intrinsic::shfl_up || op->name == kir::intrinsic::shfl_down || op->name == kir::intrinsic::shfl_idx ||
                op->name == kir::intrinsic::array_shift) {
                return lane_of(t, call(op, l), k);
            }
            auto bitwise = [&](auto fn) {
                const Value x = eval_lane(op->args[0], l, k), y = eval_lane(op->args[1], l, k);
                return et.is_uint() || et.is_bool() ? from_uint(et, fn(x.u, y.u)) : from_int(et, (int64_t)fn(x.u, y.u));
            };
            if (op->is_intrinsic(Call::bitwise_and)) return bitwise([](uint64_t x, uint64_t y) { return x & y; });
            if (op->is_intrinsic(Call::bitwise_or)) return bitwise([](uint64_t x, uint64_t y) { return x | y; });
            if (op->is_intrinsic(Call::bitwise_xor)) return bitwise([](uint64_t x, uint64_t y) { return x ^ y; });
        }
        evaluation_error("kernel ", kernel.name, ": cannot evaluate the vector ", e);
    }

    Value lookup(const std::string &name, int l) {
        auto it = env.find(name);
        if (it == env.end() || it->second.empty()) evaluation_error("kernel ", kernel.name, ": unbound variable ", name);
        return it->second.back()[l];
    }

    void require_full_array(const Call *op) {
        if (!full_array) evaluation_error("kernel ", kernel.name, ": lane exchange ", op->name, " inside divergent code");
    }

    template<typename F>
    Value arith(const Expr &a, const Expr &b, int l, F op) {
        Type t = a.type();
        Value x = eval(a, l), y = eval(b, l);
        if (t.is_float()) return from_double(t, op(x.f, y.f));
        if (t.is_uint() || t.is_bool()) return from_uint(t, op(x.u, y.u));
        return from_int(t, (int64_t)op((uint64_t)x.i, (uint64_t)y.i));  // wrap-around
    }

    /// The language's binary operation `op` (Scalar.h's binary_fn).
    Value binary(BinaryOp op, const Expr &a, const Expr &b, int l) {
        const Type t = a.type();
        return from_scalar(t, binary_fn(op, t)(to_scalar(t, eval(a, l)), to_scalar(t, eval(b, l))));
    }

    template<typename F>
    Value compare(const Expr &a, const Expr &b, int l, F op) {
        Type t = a.type();
        Value x = eval(a, l), y = eval(b, l), r;
        if (t.is_float()) r.u = op(x.f, y.f);
        else if (t.is_uint() || t.is_bool()) r.u = op(x.u, y.u);
        else r.u = op(x.i, y.i);
        return r;
    }

    Value eval(const Expr &e, int l) {
        Type t = e.type();
        if (t.is_vector()) return eval_vector(e, l);
        if (const IntImm *op = e.as<IntImm>()) return from_int(t, op->value);
        if (const UIntImm *op = e.as<UIntImm>()) return from_uint(t, op->value);
        if (const FloatImm *op = e.as<FloatImm>()) return from_double(t, op->value);
        if (const Variable *op = e.as<Variable>()) return lookup(op->name, l);
        if (const Cast *op = e.as<Cast>()) return convert(t, op->value.type(), eval(op->value, l));
        if (const Add *op = e.as<Add>()) return binary(BinaryOp::Add, op->a, op->b, l);
        if (const Sub *op = e.as<Sub>()) return binary(BinaryOp::Sub, op->a, op->b, l);
        if (const Mul *op = e.as<Mul>()) return binary(BinaryOp::Mul, op->a, op->b, l);
        if (const Div *op = e.as<Div>()) return binary(BinaryOp::Div, op->a, op->b, l);
        if (const Mod *op = e.as<Mod>()) return binary(BinaryOp::Mod, op->a, op->b, l);
        if (const Min *op = e.as<Min>()) return binary(BinaryOp::Min, op->a, op->b, l);
        if (const Max *op = e.as<Max>()) return binary(BinaryOp::Max, op->a, op->b, l);
        if (const EQ *op = e.as<EQ>()) return compare(op->a, op->b, l, [](auto x, auto y) { return x == y; });
        if (const NE *op = e.as<NE>()) return compare(op->a, op->b, l, [](auto x, auto y) { return x != y; });
        if (const LT *op = e.as<LT>()) return compare(op->a, op->b, l, [](auto x, auto y) { return x < y; });
        if (const LE *op = e.as<LE>()) return compare(op->a, op->b, l, [](auto x, auto y) { return x <= y; });
        if (const GT *op = e.as<GT>()) return compare(op->a, op->b, l, [](auto x, auto y) { return x > y; });
        if (const GE *op = e.as<GE>()) return compare(op->a, op->b, l, [](auto x, auto y) { return x >= y; });
        if (const And *op = e.as<And>()) {
            Value r;
            r.u = truth(eval(op->a, l)) && truth(eval(op->b, l));
            return r;
        }
        if (const Or *op = e.as<Or>()) {
            Value r;
            r.u = truth(eval(op->a, l)) || truth(eval(op->b, l));
            return r;
        }
        if (const Not *op = e.as<Not>()) {
            Value r;
            r.u = !truth(eval(op->a, l));
            return r;
        }
        if (const Select *op = e.as<Select>()) return truth(eval(op->condition, l)) ? eval(op->true_value, l) : eval(op->false_value, l);
        if (const Shuffle *op = e.as<Shuffle>()) {
            // One lane of a vector.
            int index = op->indices[0];
            for (const Expr &v : op->vectors) {
                if (index < v.type().lanes()) return v.type().is_scalar() ? eval(v, l) : eval_lane(v, l, index);
                index -= v.type().lanes();
            }
        }
        if (const Let *op = e.as<Let>()) {
            Lanes v = eval_lanes(op->value);
            push(op->name, v);
            Value r = eval(op->body, l);
            pop(op->name);
            return r;
        }
        if (const Call *op = e.as<Call>()) return call(op, l);
        if (const Load *op = e.as<Load>()) {
            if (kernel.grid_exchange(op->name)) return grid_state().load(op->name, eval(op->index, l).i, current_instance, thread_name(l));
            if (!shared.empty()) {
                auto it = shared.find(op->name);
                if (it != shared.end()) return load_shared(op->name, it->second, op->index, l);
            }
            return register_element(op->name, op->index, l);
        }
        evaluation_error("kernel ", kernel.name, ": cannot evaluate ", e);
    }

    Value call(const Call *op, int l) {
        const std::string &n = op->name;
        if (n == kir::intrinsic::load) {
            kir::Access a = kir::access_of(op);
            if (!truth(eval(a.guard, l))) return from_int(op->type, 0);
            return read(op->type, element(a, l));
        }
        // Warp shuffles and chain_source work within the thread's own warp
        // (lanes 0..31 of it); array_shift across the whole array.
        if (n == kir::intrinsic::shfl_up || n == kir::intrinsic::shfl_down || n == kir::intrinsic::shfl_idx) {
            require_full_array(op);
            int lane = l % warp_size, warp_base = l - lane;
            int64_t k = eval(op->args[1], l).i;
            int64_t from = n == kir::intrinsic::shfl_up ? lane - k : n == kir::intrinsic::shfl_down ? lane + k : k;
            // CUDA: a source outside the warp leaves the lane's own value (up/down); idx wraps.
            if (n == kir::intrinsic::shfl_idx) from = ((from % warp_size) + warp_size) % warp_size;
            else if (from < 0 || from >= warp_size) from = lane;
            return eval(op->args[0], warp_base + (int)from);
        }
        if (n == kir::intrinsic::chain_source) {
            require_full_array(op);
            int lane = l % warp_size, warp_base = l - lane;
            int64_t dp = eval(op->args[1], l).i;
            for (int64_t k = lane; k >= 0 && k < warp_size; k -= dp) {
                if (truth(eval(op->args[0], warp_base + (int)k))) return from_int(Int(32), k);
                if (dp == 0) break;
            }
            return from_int(Int(32), -1);
        }
        if (n == kir::intrinsic::warp_all) {
            require_full_array(op);
            const int warp_base = l - l % warp_size;
            for (int k = 0; k < warp_size; k++) {
                if (!truth(eval(op->args[0], warp_base + k))) return from_int(Bool(), 0);
            }
            return from_int(Bool(), 1);
        }
        if (n == kir::intrinsic::array_shift) {
            require_full_array(op);
            int64_t from = l - eval(op->args[1], l).i;
            if (from < 0 || from >= threads()) from = l;
            return eval(op->args[0], (int)from);
        }
        if (op->is_intrinsic(Call::bitwise_and)) return arith(op->args[0], op->args[1], l, [](auto x, auto y) { return bits(x) & bits(y); });
        if (op->is_intrinsic(Call::bitwise_or)) return arith(op->args[0], op->args[1], l, [](auto x, auto y) { return bits(x) | bits(y); });
        if (op->is_intrinsic(Call::bitwise_xor)) return arith(op->args[0], op->args[1], l, [](auto x, auto y) { return bits(x) ^ bits(y); });
        if (op->is_intrinsic(Call::abs)) {
            const Type at = op->args[0].type();
            return from_scalar(op->type, abs_fn(at)(to_scalar(at, eval(op->args[0], l))));
        }
        if (BinaryOp saturating; saturating_op(op, &saturating)) return binary(saturating, op->args[0], op->args[1], l);
        if (const UnaryFn fn = op->args.size() == 1 ? math_fn(n, op->type) : nullptr) {
            return from_scalar(op->type, fn(to_scalar(op->args[0].type(), eval(op->args[0], l))));
        }
        evaluation_error("kernel ", kernel.name, ": cannot evaluate the call ", Expr(op));
    }

    template<typename T>
    static uint64_t bits(T x) {
        if constexpr (std::is_floating_point_v<T>) {
            uint64_t u;
            std::memcpy(&u, &x, sizeof u);
            return u;
        } else {
            return (uint64_t)x;
        }
    }
};

/// The most instances of a grid-synchronised kernel the executor runs (a
/// thread each).
constexpr int64_t max_synchronised_instances = 64;

template<int MaxThreads>
void run_kernel(const kir::Kernel &kernel, Buffers &buffers, const Progress &progress) {
    if (!kernel.grid_sync) {
        kir::on_large_stack([&] { Executor<MaxThreads>(kernel, buffers).run(progress); });
        return;
    }
    // Every instance at once, each on a thread of its own, meeting at the grid barriers.
    int64_t instances = 0;
    kir::on_large_stack([&] { instances = Executor<MaxThreads>(kernel, buffers).instance_count(); });
    if (instances > max_synchronised_instances) {
        evaluation_error("kernel ", kernel.name, ": ", instances, " array instances synchronised over the grid; the kernel executor runs at most ",
                         max_synchronised_instances, " (one thread each): run it at smaller sizes");
    }
    GridState grid(kernel, instances);
    std::vector<std::exception_ptr> errors(instances);
    std::vector<std::thread> threads;
    for (int64_t w = 0; w < instances; w++) {
        threads.emplace_back([&, w] {
            try {
                kir::on_large_stack([&] { Executor<MaxThreads>(kernel, buffers, &grid).run(w == 0 ? progress : Progress(), w, w + 1); });
                grid.finish();
            } catch (const GridState::Stopped &) {
            } catch (...) {
                errors[w] = std::current_exception();
                grid.abandon();
            }
        });
    }
    for (std::thread &t : threads) t.join();
    for (const std::exception_ptr &e : errors) {
        if (e) std::rethrow_exception(e);
    }
}

}  // namespace

void execute_kernel(const kir::Kernel &kernel, Buffers &buffers, const Progress &progress) {
    if (kernel.warps_per_array < 1 || kernel.warps_per_array > kir::max_warps_per_array) {
        evaluation_error("kernel ", kernel.name, ": ", kernel.warps_per_array, " warps per array, outside [1, ",
                         kir::max_warps_per_array, "]");
    }
    // Narrow per-thread values for the common sizes: one warp, up to 8 warps, a whole block.
    if (kernel.warps_per_array == 1) run_kernel<warp_size>(kernel, buffers, progress);
    else if (kernel.warps_per_array <= 8) run_kernel<warp_size * 8>(kernel, buffers, progress);
    else run_kernel<warp_size * kir::max_warps_per_array>(kernel, buffers, progress);
}

std::string execute_against_reference(const kir::Kernel &kernel, const ir::UreProgram &program, uint32_t seed,
                                      const Progress &reference_progress, const Progress &kernel_progress) {
    Buffers actual = random_input_buffers(program, seed);
    Buffers expected = ir::realize(program, actual, reference_progress);
    for (const auto &[name, buffer] : expected) {
        Buffer<> out = buffer.copy();
        poison(out);
        actual[name] = out;
    }
    execute_kernel(kernel, actual, kernel_progress);
    Buffers outputs;
    for (const auto &[name, buffer] : expected) outputs[name] = actual.at(name);
    return compare_outputs(expected, outputs);
}

}  // namespace pulse
