#include "lower/SlideWindows.h"
#include "ir/ExactSimplify.h"

#include <map>
#include <set>
#include <sstream>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

struct HoistedLoad {
    std::string name;  ///< the let that holds it
    const Call *load;
};

bool same_coords(const std::vector<Expr> &a, const std::vector<Expr> &b) {
    if (a.size() != b.size()) return false;
    for (size_t d = 0; d < a.size(); d++) {
        if (!is_const_zero(simplify_exact(a[d] - b[d]))) return false;
    }
    return true;
}

class Slide : public IRMutator {
public:
    explicit Slide(const kir::Kernel &k) : kernel(k), names(k) {}
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        const ProducerConsumer *instance = op->body.as<ProducerConsumer>();
        if (!instance || instance->name != kir::array_instance_marker || op->for_type != ForType::Serial) {
            return IRMutator::visit(op);
        }
        // The loads hoisted to the top of the instance.
        std::vector<HoistedLoad> loads;
        Stmt rest = instance->body;
        while (const LetStmt *let = rest.as<LetStmt>()) {
            if (const Call *c = let->value.as<Call>(); c && c->name == kir::intrinsic::load) loads.push_back({let->name, c});
            rest = let->body;
        }
        // A is carried from B when A's coordinates at v + 1 are B's at v.
        Expr next = Variable::make(op->min.type(), op->name) + 1;
        std::map<std::string, std::string> source;   // A -> B
        std::map<std::string, int> slot;              // A -> its register
        std::map<std::string, const Call *> load_of;
        for (const HoistedLoad &a : loads) {
            load_of[a.name] = a.load;
            kir::Access aa = kir::access_of(a.load);
            // Constant-memory reads are operands of the instructions that use them: no register needed.
            if (kernel.buffer(aa.buffer).placement == kir::Placement::Constant) continue;
            std::vector<Expr> at_next;
            for (const Expr &c : aa.coords) at_next.push_back(substitute(op->name, next, c));
            for (const HoistedLoad &b : loads) {
                kir::Access bb = kir::access_of(b.load);
                if (bb.buffer == aa.buffer && b.load->type == a.load->type && same_coords(bb.coords, at_next)) {
                    source[a.name] = b.name;
                    break;
                }
            }
        }
        if (source.empty()) return IRMutator::visit(op);
        // One register array per type.
        std::map<std::string, Type> array_type;
        std::map<std::string, std::string> array_of;  // A -> its array
        std::map<std::string, int> count;
        std::map<std::string, std::string> array_of_type;  // type name -> its array: window.N.TYPE
        for (const auto &[a, b] : source) {
            Type t = load_of[a]->type;
            auto known = array_of_type.find(type_name(t));
            if (known == array_of_type.end()) {
                known = array_of_type.emplace(type_name(t), names.fresh(kir::NameGenerator::spell("window", std::to_string(counter)), type_name(t))).first;
            }
            const std::string array = known->second;
            array_type[array] = t;
            array_of[a] = array;
            slot[a] = count[array]++;
        }
        counter++;
        auto element = [&](const std::string &a) { return kir::register_load(load_of[a]->type, array_of[a], slot[a]); };
        auto store = [&](const std::string &a, const Expr &value) { return kir::register_store(array_of[a], value, slot[a]); };
        // End of each iteration: every carried register takes its source's
        // value, a register read by another store before it is overwritten.
        std::vector<Stmt> keep;
        std::set<std::string> pending;
        for (const auto &[a, b] : source) pending.insert(a);
        while (!pending.empty()) {
            bool progressed = false;
            for (auto it = pending.begin(); it != pending.end();) {
                bool read_later = false;
                for (const std::string &other : pending) read_later |= other != *it && source[other] == *it;
                if (read_later) {
                    ++it;
                    continue;
                }
                keep.push_back(store(*it, Variable::make(load_of[*it]->type, source[*it])));
                it = pending.erase(it);
                progressed = true;
            }
            if (!progressed) {
                // A cycle of carried registers (a window that does not move): leave the loop as it is.
                return IRMutator::visit(op);
            }
        }
        // The instance: carried lets read the registers; the stores go last,
        // inside every let (the values they store are lets).
        Stmt body = rebuild(instance->body, source, element, Block::make(rest, Block::make(keep)));
        Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api,
                              ProducerConsumer::make(instance->name, instance->is_producer, body));
        // Before the loop: the first iteration's carried values.
        std::vector<Stmt> preload;
        for (const auto &[a, b] : source) preload.push_back(store(a, substitute(op->name, op->min, Expr(load_of[a]))));
        Stmt result = Block::make(Block::make(preload), loop);
        for (const auto &[array, t] : array_type) result = kir::allocate_registers(array, t, count[array], result);
        return result;
    }

private:
    const kir::Kernel &kernel;
    kir::NameGenerator names;
    int counter = 0;

    static std::string type_name(Type t) {
        std::ostringstream s;
        s << t;
        return s.str();
    }

    /// The let chain of `s` down to `tail`, carried loads replaced by their registers.
    template<typename Element>
    static Stmt rebuild(const Stmt &s, const std::map<std::string, std::string> &source, const Element &element, const Stmt &tail) {
        if (const LetStmt *let = s.as<LetStmt>()) {
            Stmt body = rebuild(let->body, source, element, tail);
            return LetStmt::make(let->name, source.count(let->name) ? element(let->name) : let->value, body);
        }
        return tail;
    }
};

}  // namespace

void slide_windows(kir::Kernel &kernel) { kernel.body = Slide(kernel).mutate(kernel.body); }

}  // namespace pulse
