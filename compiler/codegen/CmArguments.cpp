#include "codegen/CmArguments.h"

#include "ir/ExactSimplify.h"

namespace pulse {

Halide::Expr intel_element_offset(const kir::BufferArg &b, const std::vector<Halide::Expr> &coords) {
    using Halide::Int;
    Halide::Expr index = Halide::Internal::make_const(Int(32), 0);
    // Dimension 0 is dense, as in kir::flat_index (the host builds every buffer dense).
    for (int d = 0; d < b.dimensions; d++) {
        Halide::Expr offset = Halide::cast(Int(32), coords[d]) - Halide::cast(Int(32), kir::buffer_min(b.name, d));
        index = index + (d == 0 ? offset : offset * Halide::cast(Int(32), kir::buffer_stride(b.name, d)));
    }
    return simplify_exact(index);
}

/// The kernel argument that holds a buffer field: `x.min.0` -> x_min0 (an int).
std::string cm_field_argument(const kir::Kernel &kernel, const std::string &v) {
    if (auto f = kir::BufferField::match(kernel, v)) return f->buffer + "_" + f->field() + std::to_string(f->dimension);
    return "";
}

/// The kernel's parameters: a surface per buffer, then cm_scalar_parameters.
std::vector<std::string> cm_kernel_parameters(const kir::Kernel &k) {
    std::vector<std::string> params;
    for (const kir::BufferArg &b : k.buffers) params.push_back("SurfaceIndex surf_" + b.name + " [[type(\"buffer_t\")]]");
    for (const std::string &p : cm_scalar_parameters(k)) params.push_back(p);
    return params;
}

/// Each buffer's min, extent and stride (in elements) per dimension, then
/// the thread count.
std::vector<std::string> cm_scalar_parameters(const kir::Kernel &k) {
    std::vector<std::string> params;
    for (const kir::BufferArg &b : k.buffers) {
        for (int d = 0; d < b.dimensions; d++) {
            for (const char *field : {"min", "extent", "stride"}) params.push_back("int " + b.name + "_" + field + std::to_string(d));
        }
    }
    params.push_back("int warps");
    return params;
}

/// The same arguments as host expressions over the harness's arrays.
std::vector<std::string> cm_host_scalar_arguments(const kir::Kernel &k) {
    std::vector<std::string> a;
    for (const kir::BufferArg &b : k.buffers) {
        for (int d = 0; d < b.dimensions; d++) {
            for (const char *field : {"min", "extent", "stride"}) a.push_back("(int)" + b.name + "_" + field + "[" + std::to_string(d) + "]");
        }
    }
    a.push_back("(int)warps");
    return a;
}

}  // namespace pulse
