// The affine program pulse-import reads from a C function: one chain of
// loops (bounds affine in the parameters and the enclosing loops), the assignments at each depth, and their values as
// expression trees. Frontend.cpp builds it from Clang's AST; Uniformize.cpp
// turns it into UREs and writes the spec.
#ifndef PULSE_IMPORT_MODEL_H
#define PULSE_IMPORT_MODEL_H

#include <clang/Basic/SourceLocation.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pulse_import {

/// Thrown after a diagnostic has been printed: the import stops there.
struct Rejected {};

/// A polynomial over loop variables and integer parameters with integer
/// coefficients: a monomial is the sorted list of its symbols ({} is 1).
/// Indices must be affine in the loop variables (degree <= 1 in them); the
/// coefficients of an input's index may be products of parameters (`i * M`),
/// since the spec knows the parameters as numbers.
struct Poly {
    std::map<std::vector<std::string>, int64_t> terms;

    static Poly constant(int64_t c);
    static Poly symbol(const std::string &name);
    Poly operator+(const Poly &o) const;
    Poly operator-(const Poly &o) const;
    Poly operator*(const Poly &o) const;
    bool operator==(const Poly &o) const { return terms == o.terms; }
    bool is_constant() const;
    int64_t constant_term() const;
    /// Largest number of symbols of `kind` in one monomial.
    int degree_in(const std::vector<std::string> &symbols) const;
    /// Largest number of symbols in one monomial.
    int degree() const;
    bool mentions(const std::string &symbol) const;
    int64_t evaluate(const std::map<std::string, int64_t> &values) const;
    /// C++ text (`i + Q - 1`); symbols renamed through `rename` when given.
    std::string str(const std::map<std::string, std::string> &rename = {}) const;
    /// isl text: loop variables and parameters prefixed (v_i, p_N).
    std::string isl(const std::vector<std::string> &params) const;
};

enum class CType { Int, Float, Double, Bool };
const char *halide_type(CType t);  ///< "Float(32)"
const char *c_type(CType t);       ///< "float"

/// A value: the right-hand side of an assignment.
struct Val;
using ValP = std::shared_ptr<Val>;
struct Val {
    enum Kind { Const, Param, LoopVar, Read, Unary, Binary, Select, MinMax, Cast } kind;
    CType type = CType::Int;
    double fval = 0;      ///< Const of a floating type
    int64_t ival = 0;     ///< Const of an integer type
    std::string name;     ///< Param, LoopVar; Read: the array or scalar
    std::string op;       ///< Unary, Binary, MinMax ("min"/"max")
    int read = -1;        ///< Read: its index in Program::reads
    std::vector<ValP> args;
};

struct Read {
    int stmt = -1;
    std::string target;          ///< array or local scalar
    std::vector<Poly> index;     ///< outermost first; empty for a scalar
    std::string guard;           ///< isl constraint text under which the read happens ("" always)
    clang::SourceRange range;
    std::string text;            ///< the access as written
    // Filled in by the uniformization:
    bool input = false;          ///< an input array: read at its affine index
    std::string pulse;           ///< the read in the spec (a Func call, a select of them, or an inlined value)
};

struct Stmt {
    int id = 0;
    int depth = 0;               ///< number of enclosing loops
    bool post = false;           ///< after the inner loop in its body (else before it, or innermost)
    std::string guard;           ///< isl text of the enclosing affine if-conditions ("" none)
    std::string target;          ///< written array or scalar
    std::vector<Poly> index;     ///< outermost first; empty for a scalar
    CType type = CType::Float;
    ValP value;
    clang::SourceRange range;
    std::string text;            ///< the statement as written (for the spec's comments)
    unsigned line = 0;
};

struct Loop {
    std::string var;
    /// var in [lower, upper): affine in the int parameters and the variables of
    /// the enclosing loops (a triangle: j in [0, i + 1)), never in var itself.
    Poly lower, upper;
    clang::SourceLocation loc;
};

struct Array {
    std::string name;
    CType type = CType::Float;
    int dims = 1;
    std::vector<Poly> inner_extents;  ///< the declared extents of all but the outermost dimension
    bool written = false, read = false;
    clang::SourceLocation loc;
};

struct Param {
    std::string name;
    bool is_array = false;
};

struct Program {
    std::string function, file;
    std::vector<Param> params;           ///< all parameters, in order
    std::vector<std::string> int_params; ///< the integer (size) parameters
    std::map<std::string, Array> arrays;
    std::map<std::string, CType> scalars;  ///< local scalar variables
    std::vector<Loop> loops;               ///< outermost first
    std::vector<Stmt> stmts;
    std::vector<Read> reads;
    clang::SourceLocation function_loc;
    /// Written arrays not declared restrict, each with the arrays of its element
    /// type it is assumed not to overlap (C would allow it; the spec keeps them apart).
    std::map<std::string, std::vector<std::string>> assumed_apart;
};

/// Reports an error (or a note after one) at a source location in clang's style.
class Diagnostics {
public:
    virtual ~Diagnostics() = default;
    virtual void error(clang::SourceRange where, const std::string &message) = 0;
    virtual void note(clang::SourceRange where, const std::string &message) = 0;
    virtual void warning(clang::SourceRange where, const std::string &message) = 0;
    [[noreturn]] void reject(clang::SourceRange where, const std::string &message) {
        error(where, message);
        throw Rejected{};
    }
};

struct ImportOptions {
    std::string spec_name;                   ///< default: the function's name
    std::map<std::string, int64_t> defaults; ///< parameter defaults for the spec (others: 8)
};

/// Builds the spec's C++ text (and, when check_out is given, a check that runs
/// the C function against the spec). Rejects a dependence it cannot make uniform.
std::string write_spec(Program &program, const ImportOptions &options, Diagnostics &diag, std::string *check_out);

}  // namespace pulse_import

#endif
