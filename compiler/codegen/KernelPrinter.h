// The walk over the kernel IR (KernelIR.h) that the backends' printers share,
// as Halide's CodeGen_C shares IRPrinter's: the statement structure (lets
// and their scopes, blocks, array instances, serial loops) is printed here;
// a backend says how each leaf looks (a let, a guard, a register array, a
// store to a buffer) and how expressions print. Nothing is planned while
// printing: every mapping decision is already in the IR.
#ifndef PULSE_CODEGEN_KERNEL_PRINTER_H
#define PULSE_CODEGEN_KERNEL_PRINTER_H

#include <sstream>
#include <string>

#include "ir/KernelIR.h"

namespace pulse {

/// A C identifier for an IR name (`x.extent.0` and SSA names carry dots).
std::string c_name(const std::string &name);

/// `text` as the continuation of a `// ` comment: every line after the first
/// starts with `// `, and the text ends with a newline.
std::string comment_lines(const std::string &text);

/// The base of the kernel printers (CodeGenCudaKernel.h, CodeGenCM.h).
class KernelPrinter {
public:
    explicit KernelPrinter(const kir::Kernel &kernel) : kernel(kernel) {}
    virtual ~KernelPrinter() = default;

protected:
    const kir::Kernel &kernel;
    std::ostringstream out;  ///< the body printed so far
    int loop_depth = 0;      ///< serial loops around the statement being printed

    /// Prints `s` into `out` at `indent` (4 spaces a level).
    void stmt(const Halide::Internal::Stmt &s, int indent);

    /// An expression in the backend's syntax, where the loop bounds are
    /// printed (the same on every lane).
    virtual std::string expr(const Halide::Expr &e) = 0;
    /// `let name = value` for the rest of the enclosing statement.
    virtual void let(const Halide::Internal::LetStmt *op, int indent) = 0;
    /// A register array (MemoryType::Register, constant indices); prints its body.
    virtual void allocate(const Halide::Internal::Allocate *op, int indent) = 0;
    /// A write into a register array.
    virtual void register_store(const Halide::Internal::Store *op, int indent) = 0;
    /// A `pulse.store` into a buffer.
    virtual void buffer_store(const Halide::Internal::Call *store, int indent) = 0;
    /// A `pulse.barrier` over the array's threads.
    virtual void barrier(int indent);
    /// A `pulse.grid_barrier` over every thread of the grid.
    virtual void grid_barrier(int indent);
    /// A guard; by default a C `if` on expr(condition).
    virtual void if_then_else(const Halide::Internal::IfThenElse *op, int indent);
    /// A C `if` on the condition text `condition`, then the branches.
    void print_if(const Halide::Internal::IfThenElse *op, const std::string &condition, int indent);
    /// Names the backend in "cannot print" errors.
    virtual const char *backend() const = 0;

    static std::string pad(int indent) { return std::string(indent * 4, ' '); }
};

}  // namespace pulse

#endif
