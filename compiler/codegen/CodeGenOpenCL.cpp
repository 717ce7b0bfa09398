#include "codegen/CodeGenOpenCL.h"

#include <sstream>

#include "codegen/CmArguments.h"
#include "codegen/CodeGenC.h"
#include "codegen/CodeGenReference.h"
#include "codegen/KernelPrinter.h"
#include "ir/CmRegisters.h"
#include "ir/IndexArithmetic.h"
#include "ir/Target.h"

extern const char *const pulse_opencl_helpers_text;  // runtime/emitted/opencl_helpers.cl (EmbedFile.cmake)

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Prints the kernel IR as the body of an OpenCL kernel: per work-item C, as
/// the CUDA printer prints per thread.
class OpenCLPrinter : public KernelPrinter {
public:
    explicit OpenCLPrinter(const kir::Kernel &k) : KernelPrinter(k), indices(k.body) {
        for (const kir::BufferArg &b : k.buffers) {
            internal_assert(b.placement == kir::Placement::Global, "OpenCL backend: buffer ", b.name,
                            " not in global memory (the CM target's lowering keeps every buffer there)");
        }
    }

    std::string body() {
        out.str("");
        stmt(kernel.body, 1);
        return out.str();
    }

private:
    IndexArithmetic indices;

    const char *backend() const override { return "OpenCL"; }

    std::string expr(const Expr &e) override {
        CPrinterHooks hooks;
        hooks.is_index = [&](const Expr &x) { return indices.is_index(x); };
        hooks.variable = [&](const std::string &v) -> std::string {
            std::string f = cm_field_argument(kernel, v);
            if (!f.empty()) return f;
            if (v == kir::warp_index_var) return "warp_index";
            return c_name(v);
        };
        hooks.scalar_function = [](const std::string &fn, const std::vector<Type> &types, const std::vector<std::string> &args) {
            std::string s = fn;
            for (const Type &t : types) s += "_" + c_type(t);
            s += "(";
            for (size_t i = 0; i < args.size(); i++) s += (i ? ", " : "") + args[i];
            return s + ")";
        };
        hooks.call = [&](const Call *op, const std::vector<std::string> &args) -> std::string {
            const std::string &n = op->name;
            if (n == kir::intrinsic::load) {
                kir::Access a = kir::access_of(op);
                const kir::BufferArg &b = kernel.buffer(a.buffer);
                std::string element = b.name + "_data[" + expr(intel_element_offset(b, a.coords)) + "]";
                if (is_const_one(a.guard)) return element;
                return "(" + expr(a.guard) + " ? " + element + " : (" + c_type(op->type) + ")0)";
            }
            // CUDA's shuffles keep a lane's own value where the source lane is
            // past the warp; Intel's wrap around, so the lanes that would wrap keep theirs.
            if (n == kir::intrinsic::shfl_up) {
                return "(lane >= " + args[1] + " ? intel_sub_group_shuffle_up(" + args[0] + ", " + args[0] + ", (uint)(" + args[1] +
                       ")) : " + args[0] + ")";
            }
            if (n == kir::intrinsic::shfl_down) {
                return "(lane + " + args[1] + " < PULSE_SUB_GROUP_SIZE ? intel_sub_group_shuffle_down(" + args[0] + ", " + args[0] +
                       ", (uint)(" + args[1] + ")) : " + args[0] + ")";
            }
            if (n == kir::intrinsic::shfl_idx) return "intel_sub_group_shuffle(" + args[0] + ", (uint)(" + args[1] + "))";
            if (n == kir::intrinsic::warp_all) return "sub_group_all(" + args[0] + ")";
            if (n == kir::intrinsic::chain_source) {
                return "pulse_chain_source(intel_sub_group_ballot(" + args[0] + "), lane, " + args[1] + ")";
            }
            internal_error("OpenCL printer: cannot print the call ", Expr(op));
        };
        return print_c_expr(e, hooks);
    }

    void let(const LetStmt *op, int indent) override {
        out << pad(indent) << "const " << c_type(op->value.type()) << " " << c_name(op->name) << " = " << expr(op->value) << ";\n";
    }

    void allocate(const Allocate *op, int indent) override {
        internal_assert(op->memory_type != Halide::MemoryType::GPUShared,
                        "OpenCL printer: shared memory in a kernel of a CM target (check_cm_support refuses it)");
        // Indexed by constants only, so it stays in registers.
        out << pad(indent) << c_type(op->type) << " " << c_name(op->name) << "[" << expr(op->extents[0]) << "];\n";
        stmt(op->body, indent);
    }

    void barrier(int indent) override { out << pad(indent) << "sub_group_barrier(CLK_GLOBAL_MEM_FENCE);\n"; }

    void register_store(const Store *op, int indent) override {
        out << pad(indent) << c_name(op->name) << "[" << expr(op->index) << "] = " << expr(op->value) << ";\n";
    }

    void buffer_store(const Call *c, int indent) override {
        kir::Access a = kir::access_of(c);
        const kir::BufferArg &b = kernel.buffer(a.buffer);
        std::string assign = b.name + "_data[" + expr(intel_element_offset(b, a.coords)) + "] = " + expr(a.value) + ";";
        if (is_const_one(a.guard)) out << pad(indent) << assign << "\n";
        else out << pad(indent) << "if (" << expr(a.guard) << ") " << assign << "\n";
    }
};

}  // namespace

int opencl_sub_group_size(const kir::Kernel &kernel) {
    const int lanes = cm_lanes(kernel);
    return lanes <= 8 ? 8 : lanes <= 16 ? 16 : 32;
}

std::string print_opencl_kernel(const kir::Kernel &k) {
    std::string body;
    kir::on_large_stack([&] { body = OpenCLPrinter(k).body(); });
    const int size = opencl_sub_group_size(k);
    std::ostringstream out;
    out << "// " << k.name << ".cl: OpenCL C kernel for Intel GPUs (cl_intel_subgroups). " << generated_by() << ".\n//\n// "
        << comment_lines(k.description);
    out << "//\n// One sub-group runs what one warp of the kernel IR runs (one sub-group per work-group):\n"
        << "// work-item l of the sub-group is lane l; lanes past the array (" << cm_lanes(k) << " lanes) idle.\n"
        << "// Sub-group size " << size << "; a device whose least size is larger (pvc: 16) takes\n"
        << "// -DPULSE_MIN_SUB_GROUP_SIZE=16. Launch: global size warps * PULSE_SUB_GROUP_SIZE, local size\n"
        << "// PULSE_SUB_GROUP_SIZE. Buffers: the layout of " << k.name << "_reference.h (" << k.name << "_BUFFER_region),\n"
        << "// with BUFFER_minD, BUFFER_extentD and BUFFER_strideD in elements.\n";
    out << "#ifndef PULSE_MIN_SUB_GROUP_SIZE\n#define PULSE_MIN_SUB_GROUP_SIZE 8\n#endif\n";
    out << "#if PULSE_MIN_SUB_GROUP_SIZE > " << size << "\n#define PULSE_SUB_GROUP_SIZE PULSE_MIN_SUB_GROUP_SIZE\n#else\n#define PULSE_SUB_GROUP_SIZE "
        << size << "\n#endif\n\n";
    out << pulse_opencl_helpers_text << "\n";
    out << "__attribute__((intel_reqd_sub_group_size(PULSE_SUB_GROUP_SIZE)))\n__kernel void " << k.name << "(";
    std::vector<std::string> params;
    for (const kir::BufferArg &b : k.buffers) {
        params.push_back(std::string("__global ") + (b.is_output ? "" : "const ") + c_type(b.type) + " *restrict " + b.name + "_data");
    }
    for (const std::string &p : cm_scalar_parameters(k)) params.push_back(p);
    for (size_t i = 0; i < params.size(); i++) out << (i ? ",\n        " : "") << params[i];
    out << ") {\n";
    out << "    const int lane = (int)get_sub_group_local_id();\n";
    out << "    const int64_t warp_index = (int64_t)get_group_id(0);\n";
    out << "    if (warp_index >= warps) return;  // the whole sub-group leaves together\n";
    out << body << "}\n";
    return out.str();
}

std::vector<GeneratedFile> print_opencl(const kir::Kernel &kernel, const ir::UreProgram &source,
                                        const std::vector<std::string> &input_order) {
    return {{kernel.name + ".cl", print_opencl_kernel(kernel)},
            {kernel.name + "_reference.h", emit_reference_cpp(source, kernel.name, input_order)},
            {kernel.name + "_opencl_host.cpp", print_opencl_host(kernel)}};
}

}  // namespace pulse
