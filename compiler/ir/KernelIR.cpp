#include "ir/KernelIR.h"
#include "ir/ExactSimplify.h"

#include <pthread.h>

#include <exception>
#include <ostream>

namespace pulse {
namespace kir {

using namespace Halide;
using namespace Halide::Internal;

const char *to_string(InputCache cache) {
    switch (cache) {
    case InputCache::Registers: return "registers";
    case InputCache::L1: return "L1";
    case InputCache::Shared: return "shared memory";
    }
    return "?";
}

int64_t BufferArg::region_elements() const {
    int64_t n = 1;
    for (int64_t e : region_extent) n *= e;
    return n;
}

const BufferArg &Kernel::buffer(const std::string &name) const {
    for (const BufferArg &b : buffers) {
        if (b.name == name) return b;
    }
    internal_error("kernel ", this->name, " has no buffer ", name);
}

BufferArg &Kernel::buffer(const std::string &name) {
    return const_cast<BufferArg &>(static_cast<const Kernel *>(this)->buffer(name));
}

const BlockArray *Kernel::block_array(const std::string &name) const {
    for (const BlockArray &a : block_arrays) {
        if (a.name == name) return &a;
    }
    return nullptr;
}

const GridExchange *Kernel::grid_exchange(const std::string &name) const {
    for (const GridExchange &x : grid_exchanges) {
        if (x.name == name) return &x;
    }
    return nullptr;
}

Expr GridExchange::elements(const Expr &instances) const {
    return simplify_exact(cast(Int(64), instances) * make_const(Int(64), slots * per_instance));
}

Expr Kernel::warp_count() const {
    Expr n = make_const(Int(64), 1);
    for (const GridLoop &g : grid) n = n * cast(Int(64), g.extent);
    return simplify_exact(n);
}

Expr shuffle(const char *which, const Expr &value, const Expr &amount) {
    return Call::make(value.type(), which, {value, cast(Int(32), amount)}, Call::PureExtern);
}

Expr lane_shift(const Expr &value, int64_t dp) {
    return shuffle(dp > 0 ? intrinsic::shfl_up : intrinsic::shfl_down, value, make_const(Int(32), dp > 0 ? dp : -dp));
}

Expr array_shift(const Expr &value, int64_t dp, bool through_shared) {
    std::vector<Expr> args{value, make_const(Int(32), dp)};
    if (through_shared) args.push_back(const_true());
    return Call::make(value.type(), intrinsic::array_shift, args, Call::PureExtern);
}

int64_t Kernel::block_shared_bytes() const {
    int64_t bytes = shared_bytes(body) * arrays_per_block();
    for (const BlockArray &a : block_arrays) bytes += a.elements * a.type.bytes();
    return bytes;
}

int64_t shared_bytes(const Stmt &s) {
    int64_t bytes = 0;
    class Sum : public IRVisitor {
    public:
        int64_t &total;
        explicit Sum(int64_t &t) : total(t) {}
        using IRVisitor::visit;
        void visit(const Allocate *op) override {
            const int64_t *n = op->extents.size() == 1 ? as_const_int(op->extents[0]) : nullptr;
            if (op->memory_type == Halide::MemoryType::GPUShared && n) total += *n * op->type.bytes();
            IRVisitor::visit(op);
        }
    } sum(bytes);
    s.accept(&sum);
    return bytes;
}

bool shifts_through_shared(const Call *shift) { return shift->args.size() > 2 && is_const_one(shift->args[2]); }

Stmt barrier() { return Evaluate::make(Call::make(Int(32), intrinsic::barrier, {}, Call::Extern)); }

Stmt grid_barrier() { return Evaluate::make(Call::make(Int(32), intrinsic::grid_barrier, {}, Call::Extern)); }

Expr warp_all(const Expr &condition) { return Call::make(Bool(), intrinsic::warp_all, {condition}, Call::PureExtern); }

Expr chain_source(const Expr &condition, int64_t dp) {
    return Call::make(Int(32), intrinsic::chain_source, {condition, make_const(Int(32), dp)}, Call::PureExtern);
}

Expr load(Type type, const std::string &buffer, const Expr &guard, const std::vector<Expr> &coords) {
    std::vector<Expr> args{StringImm::make(buffer), guard};
    args.insert(args.end(), coords.begin(), coords.end());
    return Call::make(type, intrinsic::load, args, Call::PureExtern);
}

Stmt store(const std::string &buffer, const Expr &guard, const Expr &value, const std::vector<Expr> &coords) {
    std::vector<Expr> args{StringImm::make(buffer), guard, value};
    args.insert(args.end(), coords.begin(), coords.end());
    return Evaluate::make(Call::make(Int(32), intrinsic::store, args, Call::Extern));
}

bool uses_vectors(const Stmt &s) {
    class Find : public IRGraphVisitor {
    public:
        bool found = false;
        using IRGraphVisitor::include;
        void include(const Expr &e) override {
            found |= e.type().is_vector();
            if (!found) IRGraphVisitor::include(e);
        }
    } find;
    s.accept(&find);
    return find.found;
}

const Call *as_intrinsic(const Expr &e, const char *name) {
    const Call *c = e.as<Call>();
    return c && c->name == name ? c : nullptr;
}

Access access_of(const Call *op) {
    Access a;
    const StringImm *b = op->args[0].as<StringImm>();
    internal_assert(b != nullptr, "a load or store without a buffer name");
    a.buffer = b->value;
    a.guard = op->args[1];
    size_t first = 2;
    if (op->name == intrinsic::store) a.value = op->args[2], first = 3;
    a.coords.assign(op->args.begin() + first, op->args.end());
    return a;
}

int64_t register_extent(const Allocate *op) {
    const int64_t *n = op->extents.size() == 1 ? as_const_int(op->extents[0]) : nullptr;
    if (!n) compile_error("kernel IR: register array ", op->name, " has no constant extent");
    return *n;
}

Expr register_load(Type type, const std::string &array, int slot) {
    return Load::make(type, array, make_const(Int(32), slot), Buffer<>(), Parameter(), const_true(), ModulusRemainder());
}

Stmt register_store(const std::string &array, const Expr &value, int slot) {
    return Store::make(array, value, make_const(Int(32), slot), Parameter(), const_true(), ModulusRemainder());
}

Stmt allocate_registers(const std::string &array, Type type, int count, const Stmt &body) {
    return Allocate::make(array, type, Halide::MemoryType::Register, {make_const(Int(32), count)}, const_true(), body);
}

int64_t register_index(const Expr &index, const std::string &array) {
    const int64_t *i = as_const_int(index);
    if (!i) compile_error("kernel IR: register array ", array, " is indexed by ", index, ", not a constant");
    return *i;
}

bool is_lane_exchange(const Call *call) {
    return call->name == intrinsic::shfl_up || call->name == intrinsic::shfl_down || call->name == intrinsic::shfl_idx ||
           call->name == intrinsic::chain_source || call->name == intrinsic::array_shift;
}

const Variable *relu_of_variable(const Max *m) {
    const Broadcast *zero = m->b.as<Broadcast>();
    return zero && is_const_zero(zero->value) ? m->a.as<Variable>() : nullptr;
}

const char *BufferField::field() const { return kind == Min ? "min" : kind == Extent ? "extent" : "stride"; }

std::string BufferField::name() const { return buffer + "." + field() + "." + std::to_string(dimension); }

Expr BufferField::variable() const { return Variable::make(Int(64), name()); }

std::optional<BufferField> BufferField::match(const Kernel &kernel, const std::string &name) {
    for (const BufferArg &b : kernel.buffers) {
        for (Kind kind : {Min, Extent, Stride}) {
            for (int d = 0; d < b.dimensions; d++) {
                BufferField f{b.name, kind, d};
                if (name == f.name()) return f;
            }
        }
    }
    return std::nullopt;
}

Expr buffer_min(const std::string &buffer, int d) { return BufferField{buffer, BufferField::Min, d}.variable(); }
Expr buffer_extent(const std::string &buffer, int d) { return BufferField{buffer, BufferField::Extent, d}.variable(); }
Expr buffer_stride(const std::string &buffer, int d) { return BufferField{buffer, BufferField::Stride, d}.variable(); }
Expr array_thread(const Kernel &kernel) {
    Expr lane = Variable::make(Int(32), lane_var);
    if (kernel.warps_per_array <= 1) return lane;
    return Variable::make(Int(32), array_warp_var) * warp_size + lane;
}

Expr warp_index() { return Variable::make(Int(64), warp_index_var); }

Expr flat_index(const BufferArg &b, const std::vector<Expr> &coords, bool dense_first_dimension) {
    Expr index = make_const(Int(64), 0);
    if (b.placement == Placement::Constant) {
        int64_t stride = 1;
        for (int d = 0; d < b.dimensions; d++) {
            index = index + (cast(Int(64), coords[d]) - make_const(Int(64), b.region_min[d])) * make_const(Int(64), stride);
            stride *= b.region_extent[d];
        }
    } else {
        // Dimension 0 dense (the host function refuses any other stride):
        // consecutive indices are consecutive addresses, so the backend's
        // compiler can fold them into immediate offsets.
        for (int d = 0; d < b.dimensions; d++) {
            Expr offset = cast(Int(64), coords[d]) - buffer_min(b.name, d);
            index = index + (d == 0 && dense_first_dimension ? offset : offset * buffer_stride(b.name, d));
        }
    }
    return simplify_exact(index);
}

Expr in_bounds(const BufferArg &b, const std::vector<Expr> &coords) {
    Expr inside = const_true();
    for (int d = 0; d < b.dimensions; d++) {
        Expr c = cast(Int(64, coords[d].type().lanes()), coords[d]);  // a vector's coordinates lane by lane
        if (b.placement == Placement::Constant) {
            inside = inside && c >= make_const(Int(64), b.region_min[d]) && c < make_const(Int(64), b.region_min[d] + b.region_extent[d]);
        } else {
            inside = inside && c >= buffer_min(b.name, d) && c < buffer_min(b.name, d) + buffer_extent(b.name, d);
        }
    }
    return simplify_exact(inside);
}

namespace {
class CallVisitor : public IRVisitor {
public:
    explicit CallVisitor(const std::function<void(const Call *)> &f) : fn(f) {}
    const std::function<void(const Call *)> &fn;
    using IRVisitor::visit;
    void visit(const Call *op) override {
        fn(op);
        IRVisitor::visit(op);
    }
};

class CallReplacer : public IRMutator {
public:
    explicit CallReplacer(const std::function<Expr(const Call *)> &f) : fn(f) {}
    const std::function<Expr(const Call *)> &fn;
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        Expr r = fn(op);
        return r.defined() ? r : IRMutator::visit(op);
    }
};
}  // namespace

void for_each_call(const Expr &e, const std::function<void(const Call *)> &fn) {
    CallVisitor v(fn);
    e.accept(&v);
}

Expr replace_calls(const Expr &e, const std::function<Expr(const Call *)> &fn) { return CallReplacer(fn).mutate(e); }
Stmt replace_calls(const Stmt &s, const std::function<Expr(const Call *)> &fn) { return CallReplacer(fn).mutate(s); }

Stmt on_instances(const Stmt &s, const std::function<Stmt(const Stmt &)> &fn) {
    class Finder : public IRMutator {
    public:
        explicit Finder(const std::function<Stmt(const Stmt &)> &f) : fn(f) {}
        const std::function<Stmt(const Stmt &)> &fn;
        using IRMutator::visit;
        Stmt visit(const ProducerConsumer *op) override {
            if (op->name != array_instance_marker) return IRMutator::visit(op);
            return ProducerConsumer::make(op->name, op->is_producer, fn(op->body));
        }
    } finder(fn);
    return finder.mutate(s);
}

NameGenerator::NameGenerator(const Kernel &kernel) {
    for (const char *n : {lane_var, warp_index_var, array_warp_var, block_warp_var}) reserve(n);
    for (const BlockArray &a : kernel.block_arrays) reserve(a.name);
    if (kernel.block_setup.defined()) reserve(kernel.block_setup);
    for (const BufferArg &b : kernel.buffers) {
        reserve(b.name);
        for (BufferField::Kind kind : {BufferField::Min, BufferField::Extent, BufferField::Stride}) {
            for (int d = 0; d < b.dimensions; d++) reserve(BufferField{b.name, kind, d}.name());
        }
    }
    for (const GridLoop &g : kernel.grid) reserve(g.var);
    for (const GridExchange &x : kernel.grid_exchanges) reserve(x.name);
    if (kernel.body.defined()) reserve(kernel.body);
}

std::string NameGenerator::spell(const std::string &base, const std::string &role) { return base + "." + role; }

std::string NameGenerator::spell(const std::string &base, const std::string &role, int64_t index) {
    return base + "." + role + std::to_string(index);
}

std::string NameGenerator::mint(const std::string &wanted) {
    if (used.insert(wanted).second) return wanted;
    int64_t &n = last_suffix[wanted];
    std::string name;
    do {
        name = wanted + "$" + std::to_string(++n);
    } while (!used.insert(name).second);
    return name;
}

std::string NameGenerator::fresh(const std::string &base, const std::string &role) { return mint(spell(base, role)); }

std::string NameGenerator::fresh(const std::string &base, const std::string &role, int64_t index) {
    return mint(spell(base, role, index));
}

void NameGenerator::reserve(const std::string &name) { used.insert(name); }

void NameGenerator::reserve(const Stmt &s) {
    class Names : public IRVisitor {
    public:
        std::set<std::string> &names;
        explicit Names(std::set<std::string> &n) : names(n) {}
        using IRVisitor::visit;
        // Chains of lets and blocks (an unrolled body nests thousands) are walked in a loop.
        void visit(const LetStmt *op) override { walk(op); }
        void visit(const Block *op) override { walk(op); }
        void visit(const Let *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const For *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Allocate *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Variable *op) override { names.insert(op->name); }
        void visit(const Load *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Store *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Call *op) override {
            if (op->name == intrinsic::load || op->name == intrinsic::store) names.insert(access_of(op).buffer);
            IRVisitor::visit(op);
        }

    private:
        void walk(Stmt s) {
            while (s.defined()) {
                if (const LetStmt *let = s.as<LetStmt>()) {
                    names.insert(let->name);
                    let->value.accept(this);
                    s = let->body;
                } else if (const Block *block = s.as<Block>()) {
                    block->first.accept(this);
                    s = block->rest;
                } else {
                    s.accept(this);
                    return;
                }
            }
        }
    } names(used);
    s.accept(&names);
}

void on_large_stack(const std::function<void()> &action) {
    // An unrolled body nests one LetStmt per value: 10^5 frames and more. A
    // thread of its own with a large stack (sanitizers follow threads, not
    // swapped contexts); an exception thrown inside comes out here.
    constexpr size_t kernel_stack_size = size_t(512) << 20;
    struct Job {
        const std::function<void()> *action;
        std::exception_ptr error;
    } job{&action, nullptr};
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, kernel_stack_size);
    pthread_t thread;
    auto run = [](void *arg) -> void * {
        Job *j = static_cast<Job *>(arg);
        try {
            (*j->action)();
        } catch (...) {
            j->error = std::current_exception();
        }
        return nullptr;
    };
    int failed = pthread_create(&thread, &attributes, run, &job);
    pthread_attr_destroy(&attributes);
    if (failed) {
        action();  // no thread to be had: the caller's stack
        return;
    }
    pthread_join(thread, nullptr);
    if (job.error) std::rethrow_exception(job.error);
}

static void print_unwrapped(std::ostream &out, const Kernel &k) {
    out << "kernel " << k.name << " (" << k.pe_count << " PEs on " << k.array_threads() << " threads";
    if (k.pes_per_lane > 1) out << ", " << k.pes_per_lane << " per thread";
    if (k.interleaved_rows > 0) out << ", columns of " << k.interleaved_rows << " interleaved over the lanes";
    if (k.warp_rows > 0) {
        out << ", tiles of " << k.warp_rows << " rows per warp, columns " << (k.warp_columns_blocked ? "blocked by lane" : "interleaved over the lanes");
    }
    if (!k.dense_first_dimension) out << ", dimension 0 indexed by its stride";
    if (k.warps_per_array > 1) out << ", " << k.warps_per_array << " warps per array, one array per block)\n";
    else out << ", " << k.warps_per_block << " warps per block)\n";
    for (const BufferArg &b : k.buffers) {
        out << "  " << (b.is_output ? "output " : "input ") << b.name << ": " << b.type << ", " << b.dimensions << "-D";
        if (b.placement == Placement::Constant) {
            out << ", constant memory, region";
            for (int d = 0; d < b.dimensions; d++) out << " [" << b.region_min[d] << ", " << b.region_min[d] + b.region_extent[d] << ")";
        }
        if (!b.is_output && b.cache != InputCache::Registers) out << ", cached in " << to_string(b.cache);
        out << "\n";
        for (size_t d = 0; d < b.required.size(); d++) {
            if (!b.required[d]) continue;
            out << "    covers [" << b.required[d]->min << ", " << b.required[d]->max << "] in dimension " << d << " where "
                << b.required[d]->when << "\n";
        }
    }
    for (const std::string &f : k.shared_state) out << "  " << f << ": held in shared memory, moved through it\n";
    if (k.grid_sync) out << "  every instance at once, grid barriers between steps (gpu_grid_sync)\n";
    for (const GridExchange &x : k.grid_exchanges) {
        out << "  grid exchange " << x.name << ": " << x.type << ", " << x.slots << " slots of " << x.per_instance
            << " per instance, in global memory\n";
    }
    out << "  grid (warps, innermost first):";
    if (k.grid.empty()) out << " one warp";
    for (const GridLoop &g : k.grid) out << " " << g.var << " in [" << g.min << ", " << g.min << " + " << g.extent << ")";
    out << "\n";
    for (const BlockArray &a : k.block_arrays) out << "  block array " << a.name << ": " << a.type << " x " << a.elements << ", shared\n";
    if (k.block_setup.defined()) out << "block setup (every warp of a block, then a block barrier):\n" << k.block_setup << "body:\n";
    out << k.body;
}

}  // namespace kir
}  // namespace pulse

namespace pulse::kir {
void print(std::ostream &out, const Kernel &k) {
    on_large_stack([&] { print_unwrapped(out, k); });
}
}  // namespace pulse::kir
