#include "lower/PrefetchLoads.h"

#include <map>
#include <set>
#include <sstream>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// A load whose index reads another (a table at an input's value): the inner
/// load's guard may hold only where it stands (a constant region's,
/// simplified on the loop's range), so neither is moved to another iteration.
bool reads_a_load(const Call *c) {
    bool found = false;
    for (const Expr &a : c->args) {
        kir::for_each_call(a, [&](const Call *inner) { found |= inner->name == kir::intrinsic::load; });
    }
    return found;
}

struct IssuedLoad {
    std::string name;  ///< the let that holds it
    Expr load;         ///< the pulse.load call
    int slot = 0;      ///< its register in the prefetch array of its type
};

std::string type_name(Type t) {
    std::ostringstream s;
    s << t;
    return s.str();
}

/// The register arrays one prefetch fills, one per type (prefetch.N.TYPE),
/// each load a slot of its type's array.
class PrefetchArrays {
public:
    PrefetchArrays(kir::NameGenerator &names, int counter) : names(names), counter(counter) {}
    /// A new slot for `load` in its type's array.
    IssuedLoad add(const std::string &let_name, const Expr &load) {
        const std::string tn = type_name(load.type());
        if (!array_of_type.count(tn)) {
            array_of_type[tn] = names.fresh(kir::NameGenerator::spell("prefetch", std::to_string(counter)), tn);
        }
        const std::string &array = array_of_type[tn];
        array_type[array] = load.type();
        return {let_name, load, count[array]++};
    }
    const std::string &array_of(const IssuedLoad &l) const { return array_of_type.at(type_name(l.load.type())); }
    Expr element(const IssuedLoad &l) const { return kir::register_load(l.load.type(), array_of(l), l.slot); }
    /// `l`'s load with `var` at `at`, into its slot.
    Stmt issue(const IssuedLoad &l, const std::string &var, const Expr &at) const {
        return kir::register_store(array_of(l), substitute(var, at, l.load), l.slot);
    }
    /// `s` inside the arrays' allocations.
    Stmt allocate_around(Stmt s) const {
        for (const auto &[array, t] : array_type) s = kir::allocate_registers(array, t, count.at(array), s);
        return s;
    }

private:
    kir::NameGenerator &names;
    int counter;
    std::map<std::string, std::string> array_of_type;  // type name -> array
    std::map<std::string, Type> array_type;
    std::map<std::string, int> count;
};

class Prefetch : public IRMutator {
public:
    explicit Prefetch(const kir::Kernel &k) : kernel(k), names(k) {}
    using IRMutator::visit;

    Stmt visit(const ProducerConsumer *op) override {
        if (op->name != kir::array_instance_marker) return IRMutator::visit(op);
        const bool outer = inside_instance;
        inside_instance = true;
        Stmt s = IRMutator::visit(op);
        inside_instance = outer;
        return s;
    }

    Stmt visit(const For *op) override {
        if (inside_instance && op->for_type == ForType::Serial && !is_const_one(op->extent)) return prefetch_time_loop(op);
        const ProducerConsumer *instance = op->body.as<ProducerConsumer>();
        if (!instance || instance->name != kir::array_instance_marker || op->for_type != ForType::Serial ||
            is_const_one(op->extent)) {
            return IRMutator::visit(op);
        }
        // The loads at the top of the instance that move with the loop
        // (a load that does not is the same every iteration: nothing to overlap).
        std::vector<IssuedLoad> loads;
        PrefetchArrays arrays(names, counter);
        std::map<std::string, size_t> index_of;  // let name -> loads index
        Stmt rest = instance->body;  // walks the let chain
        std::vector<std::string> chain;  // the lets before each load: a load reading one stays as it is
        auto reads_chain = [&](const Expr &e) {
            for (const std::string &name : chain) {
                if (expr_uses_var(e, name)) return true;
            }
            return false;
        };
        while (const LetStmt *let = rest.as<LetStmt>()) {
            const Call *c = let->value.as<Call>();
            if (c && c->name == kir::intrinsic::load && expr_uses_var(let->value, op->name) && !reads_chain(let->value) && !reads_a_load(c) &&
                kernel.buffer(kir::access_of(c).buffer).placement != kir::Placement::Constant) {
                index_of[let->name] = loads.size();
                loads.push_back(arrays.add(let->name, let->value));
            }
            chain.push_back(let->name);
            rest = let->body;
        }
        if (loads.empty()) return IRMutator::visit(op);
        counter++;
        auto element = [&](const IssuedLoad &l) { return arrays.element(l); };
        Expr v = Variable::make(op->min.type(), op->name);
        std::vector<Stmt> next, first;
        for (const IssuedLoad &l : loads) {
            next.push_back(arrays.issue(l, op->name, v + 1));
            first.push_back(arrays.issue(l, op->name, op->min));
        }
        Stmt body = rebuild(instance->body, index_of, loads, element, Block::make(next), loads.size());
        Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api,
                              ProducerConsumer::make(instance->name, instance->is_producer, body));
        return arrays.allocate_around(Block::make(Block::make(first), loop));
    }

private:
    const kir::Kernel &kernel;
    kir::NameGenerator names;
    int counter = 0;
    bool inside_instance = false;

    /// A rolled time loop inside an instance: the global loads of each
    /// block that move with it (a wavefront's next rows) are read from
    /// registers that the block before filled, and each block issues the
    /// next one's at its top, so a block's first step does not wait on
    /// memory. Loads that read a let of the block stay where they are.
    Stmt prefetch_time_loop(const For *op) {
        Stmt body = mutate(op->body);
        class Collect : public IRGraphVisitor {
        public:
            Collect(const kir::Kernel &k, const std::string &loop) : kernel(k), loop(loop) {}
            const kir::Kernel &kernel;
            const std::string &loop;
            Scope<> inner;  ///< names bound inside the loop's body
            std::vector<Expr> loads;
            std::set<Expr, IRDeepCompare> seen;
            using IRGraphVisitor::visit;
            void visit(const LetStmt *l) override {
                l->value.accept(this);
                ScopedBinding<> bind(inner, l->name);
                l->body.accept(this);
            }
            void visit(const Let *l) override {
                l->value.accept(this);
                ScopedBinding<> bind(inner, l->name);
                l->body.accept(this);
            }
            void visit(const For *f) override {
                ScopedBinding<> bind(inner, f->name);
                IRGraphVisitor::visit(f);
            }
            void visit(const Call *c) override {
                if (c->name == kir::intrinsic::load && kernel.buffer(kir::access_of(c).buffer).placement != kir::Placement::Constant &&
                    expr_uses_var(Expr(c), loop) && !expr_uses_vars(Expr(c), inner) && !reads_a_load(c) && seen.insert(Expr(c)).second) {
                    loads.push_back(Expr(c));
                    return;
                }
                IRGraphVisitor::visit(c);
            }
        } collect(kernel, op->name);
        body.accept(&collect);
        if (collect.loads.empty()) return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        PrefetchArrays arrays(names, counter);
        std::vector<IssuedLoad> loads;
        std::map<Expr, std::string, IRDeepCompare> current;  // load -> the let that holds this block's value
        for (const Expr &load : collect.loads) {
            IssuedLoad l = arrays.add("", load);
            l.name = names.fresh(arrays.array_of(l), "now");
            current[load] = l.name;
            loads.push_back(l);
        }
        counter++;
        body = kir::replace_calls(body, [&](const Call *c) -> Expr {
            auto it = current.find(Expr(c));
            return it == current.end() ? Expr() : Variable::make(c->type, it->second);
        });
        Expr v = Variable::make(op->min.type(), op->name);
        std::vector<Stmt> next, first;
        for (const IssuedLoad &l : loads) {
            next.push_back(arrays.issue(l, op->name, v + 1));
            first.push_back(arrays.issue(l, op->name, op->min));
        }
        body = Block::make(Block::make(next), body);
        for (auto it = loads.rbegin(); it != loads.rend(); ++it) body = LetStmt::make(it->name, arrays.element(*it), body);
        return arrays.allocate_around(
            Block::make(Block::make(first), For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body)));
    }

    /// The let chain of `s` with the loads read from registers, and `issue`
    /// (the next iteration's loads) right after the last of them, before the
    /// arithmetic that follows.
    template<typename Element>
    static Stmt rebuild(const Stmt &s, const std::map<std::string, size_t> &index_of, const std::vector<IssuedLoad> &loads,
                        const Element &element, const Stmt &issue, size_t left) {
        const LetStmt *let = s.as<LetStmt>();
        if (left == 0 || !let) return Block::make(issue, s);  // (every load counted is a let of the chain)
        auto it = index_of.find(let->name);
        Stmt body = rebuild(let->body, index_of, loads, element, issue, left - (it != index_of.end()));
        return LetStmt::make(let->name, it != index_of.end() ? element(loads[it->second]) : let->value, body);
    }
};

}  // namespace

void prefetch_loads(kir::Kernel &kernel) {
    if (kernel.prefetch_walks) kernel.body = Prefetch(kernel).mutate(kernel.body);
}

}  // namespace pulse
