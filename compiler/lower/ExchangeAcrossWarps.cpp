#include "lower/ExchangeAcrossWarps.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

int64_t ExchangeRunSize::bytes_with(const Call *shift) const {
    const int64_t *d = as_const_int(shift->args[1]);
    if (d && *d == 0) return bytes;
    if (kir::shifts_through_shared(shift)) {
        for (const Expr &v : published) {
            if (equal(v, shift->args[0])) return bytes;
        }
    }
    return bytes + 2 * (int64_t)threads * shift->type.bytes();
}

bool ExchangeRunSize::fits(const Call *shift) const { return bytes == 0 || bytes_with(shift) <= budget; }

void ExchangeRunSize::add(const Call *shift) {
    bytes = bytes_with(shift);
    if (kir::shifts_through_shared(shift)) published.push_back(shift->args[0]);
}

int64_t exchange_budget(const kir::Kernel &kernel) { return kernel.max_shared_bytes - kir::shared_bytes(kernel.body); }

namespace {

std::string type_name(Type t) {
    std::ostringstream s;
    s << t;
    return s.str();
}

class LowerArrayShifts : public IRMutator {
public:
    LowerArrayShifts(const kir::Kernel &k, kir::NameGenerator &n)
        : phase_name(n.fresh("exchange", "phase")), kernel(k), names(n), budget(exchange_budget(k)) {}

    /// Element types moved across warps (a shared array each) and the most
    /// values of that type one barrier moves.
    std::map<std::string, std::pair<Type, int>> buffers;
    /// The placeholder of each buffer's half size (BUFFER.half), until every group is known.
    std::map<std::string, std::string> half_names;
    /// The register that tells which half of the shared arrays this barrier's moves use.
    const std::string phase_name;

    /// The size of half of `buffer`, a placeholder until every group is known.
    Expr half_size(const std::string &buffer) {
        auto it = half_names.find(buffer);
        if (it == half_names.end()) it = half_names.emplace(buffer, names.fresh(buffer, "half")).first;
        return Variable::make(Int(32), it->second);
    }

    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        if (!kir::as_intrinsic(op->value, kir::intrinsic::array_shift)) return IRMutator::visit(op);
        // The run of moves that follow each other without reading one another
        // shares one barrier (the moves of one array step).
        std::vector<const LetStmt *> group;
        Scope<> names;
        ExchangeRunSize size(kernel.array_threads(), budget);
        Stmt rest = op;
        while (const LetStmt *let = rest.as<LetStmt>()) {
            const Call *shift = kir::as_intrinsic(let->value, kir::intrinsic::array_shift);
            if (!shift || expr_uses_vars(let->value, names) || !size.fits(shift)) break;
            size.add(shift);
            group.push_back(let);
            names.push(let->name);
            rest = let->body;
        }
        rest = mutate(rest);

        const int threads = kernel.array_threads();
        Expr lane = Variable::make(Int(32), kir::lane_var), warp = Variable::make(Int(32), kir::array_warp_var);
        Expr thread = kir::array_thread(kernel);
        Expr phase = kir::register_load(Int(32), phase_name, 0);
        std::vector<std::pair<std::string, Expr>> in_warp, received;
        std::vector<Stmt> publish;
        std::map<std::string, int> used;  // values of each type in this group so far
        std::vector<std::pair<Expr, int>> published;  // values every thread writes (through shared), and their slots
        for (const LetStmt *let : group) {
            const Call *shift = kir::as_intrinsic(let->value, kir::intrinsic::array_shift);
            const int64_t *amount = as_const_int(shift->args[1]);
            const bool through_shared = kir::shifts_through_shared(shift);
            const int limit = through_shared ? threads : kir::warp_size;
            if (!amount || std::abs(*amount) >= limit) {
                compile_error("kernel ", kernel.name, ": ", let->name, " moves values by ", shift->args[1], " threads; moves ",
                              through_shared ? "through shared memory" : "across warps", " must be constants below ", limit);
            }
            const int d = (int)*amount;
            const Expr value = shift->args[0];
            if (d == 0) {
                received.push_back({let->name, value});
                continue;
            }
            const Type t = value.type();
            const std::string buffer = exchange_buffer(t);  // exchange.TYPE
            auto next_slot = [&]() {
                const int slot = used[buffer]++;
                auto &entry = buffers.emplace(buffer, std::make_pair(t, 0)).first->second;
                entry.second = std::max(entry.second, slot + 1);
                return slot;
            };
            if (through_shared) {
                // Every thread writes the value once (its moves share the
                // slot) and reads thread t - d's, inside the array.
                auto it = std::find_if(published.begin(), published.end(), [&](const auto &p) { return equal(p.first, value); });
                const bool first = it == published.end();
                if (first) it = published.insert(published.end(), {value, next_slot()});
                Expr base = phase * half_size(buffer) + it->second * threads;
                if (first) publish.push_back(Store::make(buffer, value, base + thread, Parameter(), const_true(), ModulusRemainder()));
                Expr inside = d > 0 ? thread >= d : thread < threads + d;
                Expr from_shared = Load::make(t, buffer, base + thread - d, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
                received.push_back({let->name, select(inside, from_shared, value)});
                continue;
            }
            const int slot = next_slot();
            Expr base = phase * half_size(buffer) + slot * threads;
            // Senders: the lanes whose value leaves their warp; receivers: the
            // lanes whose source sits in the neighbouring warp of the array.
            Expr send = d > 0 ? lane >= kir::warp_size - d : lane < -d;
            Expr receive = d > 0 ? lane < d && warp > 0 : lane >= kir::warp_size + d && warp < kernel.warps_per_array - 1;
            const std::string own_warp = in_warp_name(let->name);
            in_warp.push_back({own_warp, kir::lane_shift(value, d)});
            publish.push_back(IfThenElse::make(send, Store::make(buffer, value, base + thread, Parameter(), const_true(), ModulusRemainder())));
            Expr from_shared = Load::make(t, buffer, base + thread - d, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
            received.push_back({let->name, select(receive, from_shared, Variable::make(t, own_warp))});
        }
        Stmt body = rest;
        if (!publish.empty()) body = Block::make(kir::register_store(phase_name, 1 - phase, 0), body);
        for (size_t i = received.size(); i-- > 0;) body = LetStmt::make(received[i].first, received[i].second, body);
        if (!publish.empty()) {
            publish.push_back(kir::barrier());
            publish.push_back(body);
            body = Block::make(publish);
        }
        for (size_t i = in_warp.size(); i-- > 0;) body = LetStmt::make(in_warp[i].first, in_warp[i].second, body);
        return body;
    }

private:
    const kir::Kernel &kernel;
    kir::NameGenerator &names;
    const int64_t budget;  ///< bytes of shared memory one run may take
    std::map<std::string, std::string> buffer_of_type, in_warp_names;

    /// The shared array of the values of type `t` moved across warps.
    std::string exchange_buffer(Type t) {
        const std::string tn = type_name(t);
        auto it = buffer_of_type.find(tn);
        if (it == buffer_of_type.end()) it = buffer_of_type.emplace(tn, names.fresh("exchange", tn)).first;
        return it->second;
    }

    /// The let of the value a move takes within the warp: LET.in_warp, one name per
    /// moved let (peel_loops and specialize_interior copy a let into several branches).
    std::string in_warp_name(const std::string &let) {
        auto it = in_warp_names.find(let);
        if (it == in_warp_names.end()) it = in_warp_names.emplace(let, names.fresh(let, "in_warp")).first;
        return it->second;
    }
};

}  // namespace

void exchange_across_warps(kir::Kernel &kernel) {
    if (kernel.warps_per_array <= 1) return;
    kir::NameGenerator names(kernel);
    LowerArrayShifts lower(kernel, names);
    Stmt body = lower.mutate(kernel.body);
    if (lower.buffers.empty()) return;
    body = Block::make(kir::register_store(lower.phase_name, make_zero(Int(32)), 0), body);
    body = kir::allocate_registers(lower.phase_name, Int(32), 1, body);
    // Two halves, each an element per thread for every value a barrier moves.
    std::map<std::string, Expr> sizes;
    int64_t bytes = kir::shared_bytes(kernel.body);  // staged inputs (stage_in_shared)
    for (const auto &[name, entry] : lower.buffers) {
        const int half = entry.second * kernel.array_threads();
        sizes[lower.half_names.at(name)] = make_const(Int(32), half);
        bytes += 2 * (int64_t)half * entry.first.bytes();
        body = Allocate::make(name, entry.first, Halide::MemoryType::GPUShared, {make_const(Int(32), 2 * half)}, const_true(), body);
    }
    if (bytes > kernel.max_shared_bytes) {
        refuse(Refusal::ResourceLimit, "", "kernel ", kernel.name, ": the moves across the ", kernel.warps_per_array, " warps of its array need ", bytes,
                      " bytes of shared memory with the inputs staged there, more than the ", kernel.max_shared_bytes,
                      " bytes of a block; move fewer values per step (fewer rows unrolled per instance), give the array fewer threads ",
                      "(a value moved takes two halves of an element per thread: ", 2 * kernel.array_threads(), " elements), stage fewer inputs",
                      kernel.max_shared_bytes < kir::max_opt_in_shared_bytes
                          ? ", or let the block opt in to more shared memory (--max-shared-bytes=N, up to " +
                                std::to_string(kir::max_opt_in_shared_bytes) + ")"
                          : std::string());
    }
    body = substitute(sizes, body);
    kernel.body = body;
}

}  // namespace pulse
