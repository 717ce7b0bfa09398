#include "ir/ExactSimplify.h"

#include <map>

#include "ir/IndexArithmetic.h"
#include "ir/Scalar.h"
#include "ir/UreProgram.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Operations hidden from Halide's simplifier become calls of these names,
/// their operands still simplified (so exact folds inside them, such as a
/// select on a constant condition, still happen), and come back afterwards.
const std::string opaque_prefix = "pulse.exact.";
enum class Opaque { Add, Sub, Mul, Div, Mod, Min, Max, EQ, NE, LT, LE, GT, GE, Cast, Select };
const char *const opaque_names[] = {"add", "sub", "mul", "div", "mod", "min", "max", "eq", "ne", "lt", "le", "gt", "ge", "cast", "select"};

bool is_int_constant(const Expr &e) { return !e.type().is_bool() && (as_const_int(e) || as_const_uint(e)); }
Scalar scalar_of(const Expr &e) {
    if (const int64_t *i = as_const_int(e)) return Scalar::of_int(*i);
    return Scalar::of_uint(*as_const_uint(e));
}
Expr constant_of(Type t, const Scalar &v) { return t.is_uint() ? make_const(t, v.as_uint()) : make_const(t, v.as_int()); }

/// Hides each operation Halide's simplifier would rewrite inexactly: float
/// arithmetic, comparisons and conversions from float; min, max, /, % and
/// comparisons of int32/int64 values (index arithmetic excepted); and folds
/// integer constants itself, wrapping, where Halide would fold them to an
/// overflow error. Lets bound to integer constants are substituted first
/// (Halide would, and fold what they reach without the language's wrapping).
class Protect : public IRMutator {
public:
    explicit Protect(const IndexArithmetic &indices) : indices(indices) {}

private:
    const IndexArithmetic &indices;
    Scope<Expr> constants;
    using IRMutator::visit;


    Expr opaque_call(Type type, Opaque which, std::vector<Expr> args) {
        return Call::make(type, opaque_prefix + opaque_names[(int)which], args, Call::PureExtern);
    }
    Expr opaque(Type type, Opaque which, std::vector<Expr> args) {
        for (Expr &a : args) a = mutate(a);
        return opaque_call(type, which, args);
    }

    /// int32 and int64 values: the integers Halide assumes never overflow.
    bool overflow_assumed(const Expr &operand, const Expr &whole) const {
        return operand.type().is_int() && operand.type().bits() >= 32 && indices.reads_values(whole);
    }

    /// +, - and * of integers wrap exactly as Halide's reassociation assumes,
    /// but it folds int32/int64 constants to an overflow error: hidden for
    /// floats, and for int32/int64 outside index arithmetic.
    template<typename T>
    Expr ring(const T *op, Opaque which, BinaryOp binary) {
        const bool wide_int = op->type.is_int() && op->type.bits() >= 32;
        Expr a = mutate(op->a), b = mutate(op->b);
        if (wide_int && is_int_constant(a) && is_int_constant(b)) return constant_of(op->type, binary_fn(binary, op->type)(scalar_of(a), scalar_of(b)));
        Expr rebuilt = a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : T::make(a, b);
        if (op->type.is_float() || (wide_int && !indices.is_index(rebuilt))) return opaque_call(op->type, which, {a, b});
        return rebuilt;
    }
    /// min, max, /, % and comparisons: hidden for floats and int32/int64
    /// values; / and % of int32/int64 constants folded here (MIN / -1 wraps).
    template<typename T>
    Expr ordered(const T *op, Opaque which, std::optional<BinaryOp> binary = std::nullopt) {
        if (op->a.type().is_float() || overflow_assumed(op->a, Expr(op))) return opaque(op->type, which, {op->a, op->b});
        Expr a = mutate(op->a), b = mutate(op->b);
        if (binary && op->type.is_int() && op->type.bits() >= 32 && is_int_constant(a) && is_int_constant(b)) {
            return constant_of(op->type, binary_fn(*binary, op->type)(scalar_of(a), scalar_of(b)));
        }
        return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : T::make(a, b);
    }

    Expr visit(const Variable *op) override {
        if (!constants.contains(op->name)) return op;
        const Expr k = constants.get(op->name);
        return k.defined() ? k : Expr(op);
    }
    /// Binds `name` to its constant, or to nothing where its value is not
    /// one (so that it shadows an outer constant of the same name).
    void bind(const std::string &name, const Expr &value, std::vector<std::string> &bound) {
        constants.push(name, is_int_constant(value) ? value : Expr());
        bound.push_back(name);
    }
    void unbind(std::vector<std::string> &bound) {
        for (size_t i = bound.size(); i-- > 0;) constants.pop(bound[i]);
    }
    Stmt visit(const LetStmt *op) override {
        // Long chains of lets: walked in a loop, rebuilt innermost first.
        std::vector<std::pair<std::string, Expr>> kept;
        std::vector<std::string> bound;
        Stmt s = op;
        while (const LetStmt *l = s.as<LetStmt>()) {
            Expr value = mutate(l->value);
            bind(l->name, value, bound);
            if (!is_int_constant(value)) kept.emplace_back(l->name, value);
            s = l->body;
        }
        Stmt body = mutate(s);
        unbind(bound);
        for (size_t i = kept.size(); i-- > 0;) body = LetStmt::make(kept[i].first, kept[i].second, body);
        return body;
    }
    Expr visit(const Let *op) override {
        Expr value = mutate(op->value);
        std::vector<std::string> bound;
        bind(op->name, value, bound);
        Expr body = mutate(op->body);
        unbind(bound);
        return is_int_constant(value) ? body : Let::make(op->name, value, body);
    }

    Expr visit(const Add *op) override { return ring(op, Opaque::Add, BinaryOp::Add); }
    Expr visit(const Sub *op) override { return ring(op, Opaque::Sub, BinaryOp::Sub); }
    Expr visit(const Mul *op) override { return ring(op, Opaque::Mul, BinaryOp::Mul); }
    Expr visit(const Div *op) override { return ordered(op, Opaque::Div, BinaryOp::Div); }
    Expr visit(const Mod *op) override { return ordered(op, Opaque::Mod, BinaryOp::Mod); }
    Expr visit(const Min *op) override { return ordered(op, Opaque::Min); }
    Expr visit(const Max *op) override { return ordered(op, Opaque::Max); }
    Expr visit(const EQ *op) override { return ordered(op, Opaque::EQ); }
    Expr visit(const NE *op) override { return ordered(op, Opaque::NE); }
    Expr visit(const LT *op) override { return ordered(op, Opaque::LT); }
    Expr visit(const LE *op) override { return ordered(op, Opaque::LE); }
    Expr visit(const GT *op) override { return ordered(op, Opaque::GT); }
    Expr visit(const GE *op) override { return ordered(op, Opaque::GE); }
    /// A select with an undefined branch (ir::undefined_value) is undefined
    /// where that branch is taken; Halide would fold select(c, true, u) to
    /// c || u, undefined everywhere. Hidden; a constant condition picks its
    /// branch on the way back.
    Expr visit(const Select *op) override {
        Expr c = mutate(op->condition), a = mutate(op->true_value), b = mutate(op->false_value);
        if (ir::is_undefined_value(a) || ir::is_undefined_value(b)) return opaque_call(op->type, Opaque::Select, {c, a, b});
        return c.same_as(op->condition) && a.same_as(op->true_value) && b.same_as(op->false_value) ? Expr(op) : Select::make(c, a, b);
    }
    Expr visit(const Cast *op) override {
        if (op->value.type().is_float()) return opaque(op->type, Opaque::Cast, {op->value});
        Expr value = mutate(op->value);
        if (op->type.is_int_or_uint() && !op->type.is_bool() && is_int_constant(value)) {
            // Conversions between integers truncate (Halide folds a constant
            // out of int32/int64's range to an overflow error).
            const Scalar v = scalar_of(value);
            const uint64_t bits = op->value.type().is_uint() ? v.as_uint() : (uint64_t)v.as_int();
            const int w = op->type.bits();
            const uint64_t low = w >= 64 ? bits : bits & ((uint64_t(1) << w) - 1);
            if (op->type.is_uint()) return make_const(op->type, low);
            const int64_t signed_low = w >= 64 ? (int64_t)low : (int64_t)(low << (64 - w)) >> (64 - w);
            return make_const(op->type, signed_low);
        }
        // A conversion that may wrap (to int32/int64 from an unsigned or a
        // wider integer) is hidden too, since Halide folds it to an overflow
        // error where its operand becomes a constant (a let substituted);
        // except index arithmetic, which stays in range. Unsigned integers are
        // never index arithmetic.
        const Type from = op->value.type();
        const bool may_wrap = op->type.is_int() && op->type.bits() >= 32 && from.is_int_or_uint() &&
                              (from.is_uint() ? from.bits() >= op->type.bits() : from.bits() > op->type.bits());
        if (may_wrap && (from.is_uint() || !indices.is_index(op->value))) return opaque_call(op->type, Opaque::Cast, {value});
        return value.same_as(op->value) ? Expr(op) : Cast::make(op->type, value);
    }
};

/// Brings the hidden operations back. An integer operation whose operands
/// Halide's run made constants (inside a hidden one: (5 - -31) + 1) is
/// folded here, with the language's arithmetic (wrapping, Euclidean /).
class Unprotect : public IRMutator {
    using IRMutator::visit;

    template<typename T>
    Expr arithmetic(const T *op, BinaryOp binary) {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (op->type.is_scalar() && op->type.is_int_or_uint() && is_int_constant(a) && is_int_constant(b)) {
            return constant_of(op->type, binary_fn(binary, op->type)(scalar_of(a), scalar_of(b)));
        }
        return a.same_as(op->a) && b.same_as(op->b) ? Expr(op) : T::make(a, b);
    }
    Expr visit(const Add *op) override { return arithmetic(op, BinaryOp::Add); }
    Expr visit(const Sub *op) override { return arithmetic(op, BinaryOp::Sub); }
    Expr visit(const Mul *op) override { return arithmetic(op, BinaryOp::Mul); }
    Expr visit(const Div *op) override { return arithmetic(op, BinaryOp::Div); }
    Expr visit(const Mod *op) override { return arithmetic(op, BinaryOp::Mod); }
    Expr visit(const Min *op) override { return arithmetic(op, BinaryOp::Min); }
    Expr visit(const Max *op) override { return arithmetic(op, BinaryOp::Max); }

    Expr visit(const Call *op) override {
        if (op->call_type != Call::PureExtern || op->name.compare(0, opaque_prefix.size(), opaque_prefix) != 0) {
            return IRMutator::visit(op);
        }
        const std::string which = op->name.substr(opaque_prefix.size());
        std::vector<Expr> args;
        for (const Expr &a : op->args) args.push_back(mutate(a));
        if (which == "cast") return Cast::make(op->type, args[0]);
        if (which == "select") {
            if (is_const_one(args[0])) return args[1];
            if (is_const_zero(args[0])) return args[2];
            return Select::make(args[0], args[1], args[2]);
        }
        const Expr &a = args[0], &b = args[1];
        if (which == "add") return mutate(Add::make(a, b));
        if (which == "sub") return mutate(Sub::make(a, b));
        if (which == "mul") return mutate(Mul::make(a, b));
        if (which == "div") return mutate(Div::make(a, b));
        if (which == "mod") return mutate(Mod::make(a, b));
        if (which == "min") return mutate(Min::make(a, b));
        if (which == "max") return mutate(Max::make(a, b));
        if (which == "eq") return EQ::make(a, b);
        if (which == "ne") return NE::make(a, b);
        if (which == "lt") return LT::make(a, b);
        if (which == "le") return LE::make(a, b);
        if (which == "gt") return GT::make(a, b);
        return GE::make(a, b);
    }
};

/// Halide 14's simplifier turns `if (a) X; if (b) Y` into `if (a) X else
/// if (b) Y` when a excludes b, but also when the second if already carries
/// an else (made so from the ifs after it), whose statements a does not
/// exclude: `if (lane < 2) X; if (30 <= lane) Y; if (lane < 1) Z` loses Z.
/// A call with side effects between two ifs of different conditions keeps
/// them apart; ifs of one condition still merge (correctly) and the fences
/// go after the run.
const std::string if_fence_name = opaque_prefix + "if_fence";

class FenceIfs : public IRMutator {
    using IRMutator::visit;
    Stmt visit(const Block *op) override {
        std::vector<Stmt> statements;
        Stmt s = op;
        while (const Block *b = s.as<Block>()) {
            statements.push_back(mutate(b->first));
            s = b->rest;
        }
        statements.push_back(mutate(s));
        std::vector<Stmt> fenced;
        for (const Stmt &st : statements) {
            const IfThenElse *now = st.as<IfThenElse>();
            const IfThenElse *before = fenced.empty() ? nullptr : fenced.back().as<IfThenElse>();
            if (now && before && !equal(now->condition, before->condition)) {
                fenced.push_back(Evaluate::make(Call::make(Int(32), if_fence_name, {}, Call::Extern)));
            }
            fenced.push_back(st);
        }
        return Block::make(fenced);
    }
};

class RemoveIfFences : public IRMutator {
    using IRMutator::visit;
    Stmt visit(const Evaluate *op) override {
        const Call *call = op->value.as<Call>();
        if (call && call->name == if_fence_name) return Evaluate::make(0);
        return IRMutator::visit(op);
    }
    Stmt visit(const Block *op) override {
        Stmt first = mutate(op->first), rest = mutate(op->rest);
        if (is_no_op(first)) return rest;
        if (is_no_op(rest)) return first;
        return Block::make(first, rest);
    }
};

/// Whether a let of float value `e` is one Halide's simplifier substitutes
/// into its uses, and would have had its operations not been hidden from it:
/// peeling operations whose one operand is a variable or a constant reaches
/// a variable or a constant (x + y * z does; x * y + z * w does not).
bool halide_would_substitute(Expr e) {
    if (!e.type().is_float()) return false;
    auto leaf = [](const Expr &x) { return x.as<Variable>() || is_const(x); };
    while (!leaf(e)) {
        Expr a, b;
        bool commutes = false;
        if (const Add *op = e.as<Add>()) a = op->a, b = op->b, commutes = true;
        else if (const Mul *op = e.as<Mul>()) a = op->a, b = op->b, commutes = true;
        else if (const Min *op = e.as<Min>()) a = op->a, b = op->b, commutes = true;
        else if (const Max *op = e.as<Max>()) a = op->a, b = op->b, commutes = true;
        else if (const Sub *op = e.as<Sub>()) a = op->a, b = op->b;
        else if (const Div *op = e.as<Div>()) a = op->a, b = op->b;
        else return false;
        if (leaf(b)) e = a;
        else if (commutes && leaf(a)) e = b;
        else return false;
    }
    return true;
}

/// Substitutes such lets into their uses, as Halide's simplifier does for the
/// arithmetic it sees (values are the same, evaluated where used).
class InlineArithmeticLets : public IRMutator {
    using IRMutator::visit;
    std::map<std::string, Expr> replacements;

    Expr visit(const Variable *op) override {
        auto it = replacements.find(op->name);
        return it == replacements.end() ? Expr(op) : it->second;
    }

    Stmt visit(const LetStmt *op) override {
        // Long chains of lets: walked in a loop, rebuilt innermost first.
        // A name bound again (peeled iterations) shadows the outer binding in
        // its body only: the replacements in force are restored after.
        const std::map<std::string, Expr> outer = replacements;
        std::vector<std::pair<std::string, Expr>> kept;
        Stmt s = op;
        while (const LetStmt *let = s.as<LetStmt>()) {
            Expr value = mutate(let->value);
            if (halide_would_substitute(value)) {
                replacements[let->name] = value;
            } else {
                replacements.erase(let->name);
                kept.emplace_back(let->name, value);
            }
            s = let->body;
        }
        Stmt body = mutate(s);
        replacements = outer;
        for (size_t i = kept.size(); i-- > 0;) body = LetStmt::make(kept[i].first, kept[i].second, body);
        return body;
    }
};


/// Whether Halide folded an int32/int64 constant to an overflow error.
bool folds_overflow(const IRNode *node) {
    class Find : public IRVisitor {
        using IRVisitor::visit;
        void visit(const Call *op) override {
            found |= op->is_intrinsic(Call::signed_integer_overflow);
            IRVisitor::visit(op);
        }
    public:
        bool found = false;
    } find;
    node->accept(&find);
    return find.found;
}

}  // namespace

// Index arithmetic is told apart by its form (loop variables, sizes and
// constants). A value the spec computes from loop variables and constants
// alone has that form too; where Halide folds it to an overflow error (its
// constants met only after a select on a loop variable folded), the run is
// done again with every integer expression treated as a value.
Expr simplify_exact(const Expr &e) {
    if (!e.defined()) return e;
    Expr r = Unprotect().mutate(simplify(Protect(IndexArithmetic{Stmt()}).mutate(e)));
    if (folds_overflow(r.get())) r = Unprotect().mutate(simplify(Protect(IndexArithmetic::none()).mutate(e)));
    return r;
}

Stmt simplify_exact(const Stmt &s) {
    if (!s.defined()) return s;
    auto run = [&](const IndexArithmetic &indices) {
        const Stmt simplified = simplify(FenceIfs().mutate(Protect(indices).mutate(s)));
        return InlineArithmeticLets().mutate(RemoveIfFences().mutate(Unprotect().mutate(simplified)));
    };
    Stmt r = run(IndexArithmetic(s));
    if (folds_overflow(r.get())) r = run(IndexArithmetic::none());
    return r;
}

}  // namespace pulse
