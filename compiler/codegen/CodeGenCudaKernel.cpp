#include "codegen/CodeGenCudaKernel.h"

#include <algorithm>
#include <optional>
#include <map>
#include <set>
#include <sstream>

#include "codegen/CodeGenC.h"
#include "ir/Target.h"
#include "codegen/CodeGenReference.h"
#include "ir/IndexArithmetic.h"
#include "codegen/KernelPrinter.h"

extern const char *const pulse_chain_source_text;  // runtime/emitted/pulse_chain_source.cuh (EmbedFile.cmake)
extern const char *const pulse_vectors_text;       // runtime/emitted/pulse_vectors.cuh

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Lane k of `e` (a scalar is the same on every lane).
Expr lane_of(const Expr &e, int k) { return e.type().is_scalar() ? e : extract_lane(e, k); }

class CudaPrinter : public KernelPrinter {
public:
    explicit CudaPrinter(const kir::Kernel &k)
        : KernelPrinter(k), indices(k.body),
          shared_bytes(k.block_shared_bytes()),
          dynamic_shared(shared_bytes > kir::shared_bytes_per_block), shared_relus(relus_taken_twice(k.body)) {}

    IndexArithmetic indices;
    /// Devices the host function keeps a constant-memory event for.
    static constexpr int max_devices = 64;
    /// The block's shared memory; past the static 48 KiB the arrays live in
    /// dynamic shared memory (`pulse_shared`), at offsets handed out in order.
    const int64_t shared_bytes;
    const bool dynamic_shared;
    int64_t shared_offset = 0;
    /// The vector values whose max(v, 0) the body takes in more than one place.
    const std::set<std::string> shared_relus;

    static std::set<std::string> relus_taken_twice(const Stmt &body) {
        struct Count : IRVisitor {
            std::map<std::string, int> uses;
            using IRVisitor::visit;
            void visit(const Max *op) override {
                if (const Variable *v = kir::relu_of_variable(op)) uses[v->name]++;
                IRVisitor::visit(op);
            }
        } count;
        body.accept(&count);
        std::set<std::string> twice;
        for (const auto &[name, n] : count.uses) {
            if (n > 1) twice.insert(name);
        }
        return twice;
    }

    std::string expr(const Expr &e) override {
        CPrinterHooks hooks;
        hooks.is_index = [&](const Expr &x) { return indices.is_index(x); };
        hooks.shared_relu = [&](const std::string &name) { return shared_relus.count(name) > 0; };
        hooks.variable = [&](const std::string &v) -> std::string {
            if (auto f = kir::BufferField::match(kernel, v)) return f->buffer + "." + f->field() + "[" + std::to_string(f->dimension) + "]";
            if (v == kir::warp_index_var) return "warp_index";
            return c_name(v);
        };
        hooks.call = [&](const Call *op, const std::vector<std::string> &args) -> std::string {
            const std::string &n = op->name;
            if (n == kir::intrinsic::load && op->type.is_vector()) {
                // Each lane its own element, under its own guard.
                const kir::Access a = kir::access_of(op);
                std::string lanes;
                for (int k = 0; k < op->type.lanes(); k++) {
                    std::vector<Expr> coords;
                    for (const Expr &c : a.coords) coords.push_back(lane_of(c, k));
                    lanes += std::string(k ? ", " : "") + expr(kir::load(op->type.element_of(), a.buffer, lane_of(a.guard, k), coords));
                }
                return "pulse_vpack<" + c_type(op->type) + ">(" + lanes + ")";
            }
            if (op->type.is_vector() && (n == kir::intrinsic::shfl_up || n == kir::intrinsic::shfl_down || n == kir::intrinsic::shfl_idx)) {
                // A vector moves whole (pulse_vectors.cuh: one shuffle of a packed pair).
                return "pulse_v" + n.substr(std::string("pulse.").size()) + "(" + args[0] + ", " + args[1] + ")";
            }
            if (n == kir::intrinsic::load) {
                kir::Access a = kir::access_of(op);
                const kir::BufferArg &b = kernel.buffer(a.buffer);
                std::string element = data_name(b) + "[" + expr(kir::flat_index(b, a.coords, kernel.dense_first_dimension)) + "]";
                if (is_const_one(a.guard)) return element;
                return "(" + expr(a.guard) + " ? " + element + " : (" + c_type(op->type) + ")0)";
            }
            if (n == kir::intrinsic::shfl_up) return "__shfl_up_sync(0xffffffffu, " + args[0] + ", " + args[1] + ")";
            if (n == kir::intrinsic::shfl_down) return "__shfl_down_sync(0xffffffffu, " + args[0] + ", " + args[1] + ")";
            if (n == kir::intrinsic::shfl_idx) return "__shfl_sync(0xffffffffu, " + args[0] + ", " + args[1] + ")";
            if (n == kir::intrinsic::warp_all) {
                // Of a vector: each lane's own vote.
                return std::string(op->type.is_vector() ? "pulse_vwarp_all(" : "__all_sync(0xffffffffu, ") + args[0] + ")";
            }
            internal_assert(n != kir::intrinsic::array_shift, "cuda printer: array_shift left for exchange_across_warps: ", Expr(op));
            if (n == kir::intrinsic::chain_source) {
                return "pulse_chain_source(__ballot_sync(0xffffffffu, " + args[0] + "), lane, " + args[1] + ")";
            }
            internal_error("cuda printer: cannot print the call ", Expr(op));
        };
        return print_c_expr(e, hooks);
    }

    static std::string data_name(const kir::BufferArg &b) {
        return b.placement == kir::Placement::Constant ? b.name + "_constant" : b.name + "_data";
    }

    const char *backend() const override { return "cuda"; }

    void let(const LetStmt *op, int indent) override {
        out << pad(indent) << "const " << c_type(op->value.type()) << " " << c_name(op->name) << " = " << expr(op->value) << ";\n";
    }

    void allocate(const Allocate *op, int indent) override {
        const std::string n = c_name(op->name), T = c_type(op->type), size = expr(op->extents[0]);
        if (op->memory_type != Halide::MemoryType::GPUShared) {
            // A register array is indexed by constants only, so it stays in
            // registers; one read and written as vectors is an array of them.
            if (const std::optional<Type> v = vector_access_type(op)) {
                const int64_t *elements = as_const_int(op->extents[0]);
                internal_assert(elements && *elements % v->lanes() == 0, "cuda printer: a vector register array of ", op->extents[0],
                                " elements: ", op->name);
                out << pad(indent) << c_type(*v) << " " << n << "[" << *elements / v->lanes() << "];\n";
                stmt(op->body, indent);
                return;
            }
            out << pad(indent) << T << " " << n << "[" << size << "];\n";
        } else if (dynamic_shared) {
            const int64_t *elements = as_const_int(op->extents[0]);
            internal_assert(elements, "cuda printer: a shared array of run-time size: ", op->name);
            const int copies = kernel.warps_per_array > 1 ? 1 : kernel.warps_per_block;
            out << pad(indent) << T << " *const " << n << " = (" << T << " *)(pulse_shared + " << shared_offset << ")";
            if (copies > 1) out << " + (threadIdx.x / 32) * " << size;  // the warps of a block each have their slice
            out << ";\n";
            shared_offset += (copies * *elements * op->type.bytes() + 15) / 16 * 16;
        } else if (kernel.warps_per_array > 1) {
            // 16-byte aligned, so that the CUDA compiler may read a thread's
            // consecutive words as one vector load.
            out << pad(indent) << "__shared__ __align__(16) " << T << " " << n << "[" << size << "];\n";  // the block is the array
        } else {
            // One copy per array: the warps of a block each have their slice.
            out << pad(indent) << "__shared__ __align__(16) " << T << " " << n << "_slices[" << kernel.warps_per_block << " * " << size << "];\n";
            out << pad(indent) << T << " *const " << n << " = " << n << "_slices + (threadIdx.x / 32) * " << size << ";\n";
        }
        stmt(op->body, indent);
    }

    void barrier(int indent) override {
        // An array of one warp waits for its own lanes only.
        out << pad(indent) << (kernel.warps_per_array > 1 ? "__syncthreads();\n" : "__syncwarp();\n");
    }

    void grid_barrier(int indent) override {
        // Every thread of every block; the blocks' global writes are seen after it.
        out << pad(indent) << "cooperative_groups::this_grid().sync();\n";
    }

    void register_store(const Store *op, int indent) override {
        const Type t = op->value.type();
        const std::string index = t.is_vector() ? std::to_string(vector_register_element(t, op->index)) : expr(op->index);
        out << pad(indent) << c_name(op->name) << "[" << index << "] = " << expr(op->value) << ";\n";
    }

    /// The vector type a register array is read and written as, if any (every
    /// access then a vector of that type: an array of vectors).
    static std::optional<Type> vector_access_type(const Allocate *op) {
        class Accesses : public IRVisitor {
        public:
            explicit Accesses(const std::string &n) : name(n) {}
            const std::string &name;
            std::vector<Type> types;  ///< of every read and write
            using IRVisitor::visit;
            void visit(const Load *l) override {
                if (l->name == name) types.push_back(l->type);
                IRVisitor::visit(l);
            }
            void visit(const Store *s) override {
                if (s->name == name) types.push_back(s->value.type());
                IRVisitor::visit(s);
            }
        } accesses(op->name);
        op->body.accept(&accesses);
        const auto vector = std::find_if(accesses.types.begin(), accesses.types.end(), [](const Type &t) { return t.is_vector(); });
        if (vector == accesses.types.end()) return std::nullopt;
        for (const Type &t : accesses.types) {
            if (t != *vector) compile_error("register array ", op->name, " is read or written both as vectors and otherwise: no C form");
        }
        return *vector;
    }

    void buffer_store(const Call *c, int indent) override {
        kir::Access a = kir::access_of(c);
        if (a.value.type().is_vector()) {
            // The vector once, then each lane to its own element under its own guard.
            const Type t = a.value.type();
            const std::string stored = "pulse_stored";
            out << pad(indent) << "{\n" << pad(indent + 1) << "const " << c_type(t) << " " << stored << " = " << expr(a.value) << ";\n";
            for (int k = 0; k < t.lanes(); k++) {
                std::vector<Expr> coords;
                for (const Expr &x : a.coords) coords.push_back(lane_of(x, k));
                const Expr lane_value = Shuffle::make_extract_element(Variable::make(t, stored), k);
                const Stmt lane_store = kir::store(a.buffer, lane_of(a.guard, k), lane_value, coords);
                buffer_store(lane_store.as<Evaluate>()->value.as<Call>(), indent + 1);
            }
            out << pad(indent) << "}\n";
            return;
        }
        const kir::BufferArg &b = kernel.buffer(a.buffer);
        std::string assign = data_name(b) + "[" + expr(kir::flat_index(b, a.coords, kernel.dense_first_dimension)) + "] = " + expr(a.value) + ";";
        if (is_const_one(a.guard)) out << pad(indent) << assign << "\n";
        else out << pad(indent) << "if (" << expr(a.guard) << ") " << assign << "\n";
    }

    std::string parameters() const {
        std::string p;
        for (const kir::BufferArg &b : kernel.buffers) p += (p.empty() ? "" : ", ") + std::string("pulse_buffer ") + b.name;
        return p;
    }

    /// The kernel's parameters past the buffers': the grid exchange arrays.
    std::string exchange_parameters() const {
        std::string p;
        for (const kir::GridExchange &x : kernel.grid_exchanges) p += ", " + c_type(x.type) + " *__restrict__ " + c_name(x.name);
        return p;
    }

    std::string header(const HostHeaderText &text) const {
        std::ostringstream s;
        s << "// " << generated_by() << ". ";
        if (!text.purpose.empty()) s << kernel.name << ": " << comment_lines(text.purpose) << "//\n// ";
        if (!text.buffers.empty()) s << comment_lines(text.buffers) << "//\n// ";
        s << comment_lines(kernel.description);
        s << "#ifndef PULSE_GENERATED_" << kernel.name << "_H\n#define PULSE_GENERATED_" << kernel.name << "_H\n\n";
        s << "#include <cuda_runtime.h>\n#include <stdint.h>\n\n#include \"pulse_buffer.h\"\n\n";
        s << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
        s << "/// Runs the array on device buffers (pointers in the descriptors), asynchronously on `stream`.\n";
        s << "/// Inputs:";
        for (const kir::BufferArg &b : kernel.buffers) {
            if (!b.is_output) s << " " << b.name << " (" << c_type(b.type) << ", " << b.dimensions << "-D)";
        }
        s << "; outputs:";
        for (const kir::BufferArg &b : kernel.buffers) {
            if (b.is_output) s << " " << b.name << " (" << c_type(b.type) << ", " << b.dimensions << "-D)";
        }
        s << ".\n/// The output extents are the problem size: the loops outside the array run as far as\n"
             "/// they reach. Each input must cover the elements those outputs read. Returns the\n"
             "/// launch's error; cudaErrorInvalidValue, launching nothing, if a buffer has other\n"
             "/// dimensions than listed, a negative extent, or no data while it has elements, "
          << (kernel.dense_first_dimension ? "if the\n/// first dimension of a buffer in global memory is not dense (stride 1), " : "")
          << "if an\n"
             "/// output overlaps another buffer in memory, if an input does not hold the indices the\n"
             "/// outputs' extents read, or if an input misses its constant region;\n"
             "/// cudaErrorInvalidConfiguration if the grid is\n"
             "/// larger than a launch allows. Calls may overlap on several streams and host threads.\n";
        s << "cudaError_t " << kernel.name << "(" << parameters() << ", cudaStream_t stream);\n\n";
        s << "/// Why the last call of " << kernel.name << " on this host thread refused its arguments (the error\n"
             "/// codes above), in words; \"\" if it did not. Define PULSE_NO_HOST_CHECKS when compiling " << kernel.name
          << ".cu\n/// to leave out the checks of the buffers' dimensions, extents and data.\n";
        s << "const char *" << kernel.name << "_last_refusal(void);\n\n";
        s << "/// The kernel's block, registers and shared memory, and how many of its blocks an SM of the\n"
             "/// current device holds at once (cudaFuncGetAttributes, cudaOccupancyMaxActiveBlocksPerMultiprocessor).\n";
        s << "cudaError_t " << kernel.name << "_launch_info(pulse_launch_info *info);\n\n";
        if (!text.layout.empty()) {
            s << text.layout << "\n";
            // A descriptor per buffer, from the layout functions above.
            for (const kir::BufferArg &b : kernel.buffers) {
                const std::string f = kernel.name + "_" + b.name;
                s << "/// The descriptor of a dense " << (b.is_output ? "output " : "input ") << b.name << " for `instances` instances: its "
                  << "indices from " << f << "_region,\n/// " << f << "_elements(instances) elements at `data`, dimension 0 innermost.\n";
                s << "static inline pulse_buffer " << f << "_buffer(" << (b.is_output ? "" : "const ") << "void *data, int64_t instances) {\n";
                s << "    int64_t min[" << b.dimensions << "], extent[" << b.dimensions << "];\n";
                s << "    for (int pulse_d = 0; pulse_d < " << b.dimensions << "; pulse_d++) " << f << "_region(pulse_d, instances, &min[pulse_d], &extent[pulse_d]);\n";
                s << "    return pulse_make_dense_buffer((void *)data, " << b.dimensions << ", min, extent);\n}\n\n";
            }
        }
        s << "#ifdef __cplusplus\n}  // extern \"C\"\n#endif\n\n#endif\n";
        return s.str();
    }

    std::string source() {
        std::ostringstream s;
        s << "// " << generated_by() << ". " << comment_lines(kernel.description) << "\n";
        s << "#include <cstdint>\n#include <cstdio>\n#include <cuda_runtime.h>\n";
        if (has_constant_inputs()) s << "#include <mutex>\n";
        if (kernel.grid_sync) s << "#include <cooperative_groups.h>\n";
        s << "\n#include \"" << kernel.name << ".h\"\n\n";
        s << scalar_semantics_source() << "\n";
        s << pulse_chain_source_text << "\n";
        if (kir::uses_vectors(kernel.body)) s << pulse_vectors_text << "\n";
        for (const kir::BufferArg &b : kernel.buffers) {
            if (b.placement != kir::Placement::Constant) continue;
            s << "// " << b.name << ": read at constant coordinates on every lane; filled before each launch.\n";
            s << "__constant__ " << c_type(b.type) << " " << data_name(b) << "[" << b.region_elements() << "];\n\n";
        }
        // An array of several warps is a block of its own (its barriers are
        // __syncthreads); arrays of one warp pack warps_per_block to a block.
        const bool block_array = kernel.warps_per_array > 1;
        const int arrays_per_block = kernel.arrays_per_block();
        const int threads = arrays_per_block * kernel.array_threads();
        s << "__global__ void __launch_bounds__(" << threads;
        if (kernel.min_blocks_per_sm > 0) s << ", " << kernel.min_blocks_per_sm;
        s << ") " << kernel.name << "_kernel(" << parameters() << exchange_parameters()
          << ", int64_t warps) {\n";
        s << "    const int lane = threadIdx.x % 32;\n";
        for (const kir::BufferArg &b : kernel.buffers) {
            if (b.placement == kir::Placement::Constant) continue;
            s << "    " << (b.is_output ? "" : "const ") << c_type(b.type) << " *__restrict__ " << data_name(b) << " = ("
              << (b.is_output ? "" : "const ") << c_type(b.type) << " *)" << b.name << ".data;\n";
        }
        if (dynamic_shared) {
            s << "    extern __shared__ __align__(16) unsigned char pulse_shared[];  // " << shared_bytes
              << " bytes: more than a block's static 48 KiB\n";
        }
        s << block_setup();
        if (block_array) {
            s << "    const int array_warp = threadIdx.x / 32;\n";
            s << "    const int64_t warp_index = blockIdx.x;  // the array instance\n";
            s << "    if (warp_index >= warps) return;  // the whole block leaves together\n";
        } else {
            s << "    const int64_t warp_index = (int64_t)blockIdx.x * " << arrays_per_block << " + threadIdx.x / 32;\n";
            s << "    if (warp_index >= warps) return;  // the whole warp leaves together\n";
        }
        out.str("");
        stmt(kernel.body, 1);
        s << out.str() << "}\n\n";
        // The host function.
        const bool constant = has_constant_inputs();
        if (constant) {
            s << "// Calls on several streams or host threads share this kernel's constant memory: each call\n"
                 "// fills it, on its stream, only once the kernel of the call before has read it (an event\n"
                 "// per device, taken under a lock), so no call overwrites what another's kernel still reads.\n"
                 "// These launches run one after another on the GPU; the rest of the streams' work does not wait.\n";
            s << "static std::mutex " << kernel.name << "_constant_lock;\n";
            s << "static cudaEvent_t " << kernel.name << "_constant_read[" << max_devices << "];\n\n";
        }
        // Why the last call on this host thread refused its arguments.
        const std::string refuse = kernel.name + "_refuse";
        s << "static thread_local const char *" << kernel.name << "_refusal = \"\";\n";
        bool any_required = false;
        for (const kir::BufferArg &b : kernel.buffers) {
            for (const auto &r : b.required) any_required |= r.has_value();
        }
        if (any_required) s << "static thread_local char " << kernel.name << "_refusal_text[512];  // a refusal with numbers in it\n";
        s << "\n";
        s << "extern \"C\" const char *" << kernel.name << "_last_refusal(void) { return " << kernel.name << "_refusal; }\n\n";
        s << "static cudaError_t " << refuse << "(cudaError_t error, const char *why) {\n    " << kernel.name
          << "_refusal = why;\n    return error;\n}\n\n";
        s << "extern \"C\" cudaError_t " << kernel.name << "(" << parameters() << ", cudaStream_t stream) {\n";
        s << "    " << kernel.name << "_refusal = \"\";\n";
        // A buffer that is not what the kernel indexes would be read or written
        // wrongly (or not at all) in silence: refuse it before anything runs.
        s << "#ifndef PULSE_NO_HOST_CHECKS\n";
        s << "    // Every buffer as the kernel indexes it: its dimensions, extents of 0 or more, data where it has elements.\n";
        for (const kir::BufferArg &b : kernel.buffers) {
            const std::string &n = b.name;
            const std::string what = (b.is_output ? "output " : "input ") + n;
            s << "    if (" << n << ".dimensions != " << b.dimensions << ") return " << refuse << "(cudaErrorInvalidValue, \"" << what
              << ": the kernel indexes " << b.dimensions << " dimension(s); set its dimensions to " << b.dimensions << "\");\n";
            s << "    {\n        int64_t elements = 1;\n";
            s << "        for (int pulse_d = 0; pulse_d < " << b.dimensions << "; pulse_d++) {\n";
            s << "            if (" << n << ".extent[pulse_d] < 0) return " << refuse << "(cudaErrorInvalidValue, \"" << what
              << ": a negative extent\");\n";
            s << "            elements *= " << n << ".extent[pulse_d];\n        }\n";
            s << "        if (elements > 0 && " << n << ".data == nullptr) return " << refuse << "(cudaErrorInvalidValue, \"" << what
              << ": no data (a null pointer) for its elements\");\n";
            if (b.placement == kir::Placement::Global && kernel.dense_first_dimension) {
                s << "        if (elements > 0 && " << n << ".stride[0] != 1) return " << refuse << "(cudaErrorInvalidValue, \"" << what
                  << ": its first dimension has a stride other than 1; the kernel reads and writes dimension 0 as dense: "
                  << "pass a buffer whose first dimension is contiguous (stride[0] = 1), e.g. a dense copy\");\n";
            }
            s << "    }\n";
        }
        // An output in the memory of another buffer: the kernel would read what it writes.
        for (size_t i = 0; i < kernel.buffers.size(); i++) {
            for (size_t j = i + 1; j < kernel.buffers.size(); j++) {
                const kir::BufferArg &a = kernel.buffers[i], &b = kernel.buffers[j];
                if (!a.is_output && !b.is_output) continue;
                const kir::BufferArg &out = b.is_output ? b : a, &other = b.is_output ? a : b;
                s << "    if (pulse_buffers_overlap(&" << out.name << ", sizeof(" << c_type(out.type) << "), &" << other.name << ", sizeof("
                  << c_type(other.type) << "))) return " << refuse << "(cudaErrorInvalidValue, \"output " << out.name << ": its memory overlaps "
                  << (other.is_output ? "output " : "input ") << other.name << "'s; the kernel reads and writes them at once, so give each "
                  << "output memory of its own\");\n";
            }
        }
        // Each input covers what the outputs' extents read (out-of-range loads would read 0).
        for (const kir::BufferArg &b : kernel.buffers) {
            for (size_t d = 0; d < b.required.size(); d++) {
                if (!b.required[d]) continue;
                const std::string n = b.name, dim = std::to_string(d);
                s << "    if (" << expr(b.required[d]->when) << ") {\n";
                s << "        const int64_t need_min = " << expr(b.required[d]->min) << ", need_max = " << expr(b.required[d]->max) << ";\n";
                s << "        if (need_min < " << n << ".min[" << dim << "] || need_max > " << n << ".min[" << dim << "] + " << n << ".extent["
                  << dim << "] - 1) {\n";
                s << "            std::snprintf(" << kernel.name << "_refusal_text, sizeof " << kernel.name << "_refusal_text, \"input " << n
                  << ": holds [%lld, %lld] in dimension " << dim << ", but the outputs' extents read [%lld, %lld]: give it those indices\", "
                  << "(long long)" << n << ".min[" << dim << "], (long long)(" << n << ".min[" << dim << "] + " << n << ".extent[" << dim
                  << "] - 1), (long long)need_min, (long long)need_max);\n";
                s << "            return " << refuse << "(cudaErrorInvalidValue, " << kernel.name << "_refusal_text);\n        }\n    }\n";
            }
        }
        s << "#endif\n";
        if (constant) {
            s << "    std::lock_guard<std::mutex> constant_lock(" << kernel.name << "_constant_lock);\n";
            s << "    cudaEvent_t constant_read = nullptr;\n    {\n        int device = 0;\n";
            s << "        cudaError_t e = cudaGetDevice(&device);\n        if (e != cudaSuccess) return e;\n";
            s << "        if (device < 0 || device >= " << max_devices << ") return " << refuse
              << "(cudaErrorInvalidDevice, \"the device number is past the " << max_devices << " the host function keeps constant memory for\");\n";
            s << "        cudaEvent_t &read = " << kernel.name << "_constant_read[device];\n";
            s << "        e = read ? cudaStreamWaitEvent(stream, read, 0) : cudaEventCreateWithFlags(&read, cudaEventDisableTiming);\n";
            s << "        if (e != cudaSuccess) return e;\n        constant_read = read;\n    }\n";
        }
        for (const kir::BufferArg &b : kernel.buffers) {
            if (b.placement != kir::Placement::Constant) continue;
            const std::string T = c_type(b.type), n = b.name;
            s << "    // Copy " << n << "'s region to constant memory: in one copy where it is contiguous in the buffer\n"
                 "    // (each copy is a launch of its own), else one row at a time (the buffer may be strided).\n";
            s << "    {\n        const int64_t region_min[] = {";
            for (int d = 0; d < b.dimensions; d++) s << (d ? ", " : "") << b.region_min[d];
            s << "}, region_extent[] = {";
            for (int d = 0; d < b.dimensions; d++) s << (d ? ", " : "") << b.region_extent[d];
            s << "};\n";
            s << "        bool contiguous = " << n << ".stride[0] == 1;\n";
            s << "        for (int pulse_d = 0; pulse_d < " << b.dimensions << "; pulse_d++) {\n";
            s << "            if (region_min[pulse_d] < " << n << ".min[pulse_d] || region_min[pulse_d] + region_extent[pulse_d] > " << n
              << ".min[pulse_d] + " << n << ".extent[pulse_d]) return " << refuse << "(cudaErrorInvalidValue, \"input " << n
              << " does not cover the region the kernel copies to constant memory (see the header)\");\n";
            s << "            if (pulse_d > 0) contiguous = contiguous && " << n << ".stride[pulse_d] == " << n << ".stride[pulse_d - 1] * region_extent[pulse_d - 1];\n";
            s << "        }\n";
            s << "        if (" << n << ".stride[0] != 1) return " << refuse << "(cudaErrorInvalidValue, \"input " << n
              << ": its first dimension must be dense (stride 1) to be copied to constant memory\");\n";
            s << "        const int64_t row_elements = contiguous ? " << b.region_elements() << " : region_extent[0];\n";
            s << "        const int64_t rows = " << b.region_elements() << " / row_elements;\n";
            s << "        for (int64_t row = 0; row < rows; row++) {\n";
            s << "            int64_t offset = (region_min[0] - " << n << ".min[0]) * " << n << ".stride[0], rest = row;\n";
            s << "            for (int pulse_d = 1; pulse_d < " << b.dimensions << "; pulse_d++) {\n";
            s << "                offset += (region_min[pulse_d] + rest % region_extent[pulse_d] - " << n << ".min[pulse_d]) * " << n << ".stride[pulse_d];\n";
            s << "                rest /= region_extent[pulse_d];\n            }\n";
            s << "            cudaError_t e = cudaMemcpyToSymbolAsync(" << data_name(b) << ", (const " << T << " *)" << n
              << ".data + offset, row_elements * sizeof(" << T << "), row * row_elements * sizeof(" << T
              << "), cudaMemcpyDeviceToDevice, stream);\n";
            s << "            if (e != cudaSuccess) return e;\n        }\n    }\n";
        }
        s << "    const int64_t warps = " << expr(kernel.warp_count()) << ";\n";
        s << "    if (warps <= 0) return cudaSuccess;\n";
        s << "    const int64_t blocks = (warps + " << arrays_per_block - 1 << ") / " << arrays_per_block << ";\n";
        s << "    if (blocks > 2147483647) return " << refuse
          << "(cudaErrorInvalidConfiguration, \"the outputs need more blocks than a grid's x extent holds (2^31 - 1)\");\n";
        const int64_t launch_shared = dynamic_shared ? shared_offset : 0;
        if (dynamic_shared) {
            s << "    // The block's arrays take " << launch_shared << " bytes of shared memory, past the 48 KiB it has\n"
                 "    // without opting in: the device must allow that much (cudaDevAttrMaxSharedMemoryPerBlockOptin).\n";
            s << "    {\n        int device = 0, opt_in = 0;\n";
            s << "        cudaError_t e = cudaGetDevice(&device);\n";
            s << "        if (e == cudaSuccess) e = cudaDeviceGetAttribute(&opt_in, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);\n";
            s << "        if (e != cudaSuccess) return e;\n";
            s << "        if (opt_in < " << launch_shared << ") return " << refuse << "(cudaErrorInvalidConfiguration, \"the kernel needs "
              << launch_shared << " bytes of shared memory per block, more than this device allows\");\n";
            s << "        e = cudaFuncSetAttribute(" << kernel.name << "_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, "
              << launch_shared << ");\n";
            s << "        if (e != cudaSuccess) return e;\n    }\n";
        }
        if (kernel.grid_sync) {
            s << grid_synchronised_launch(threads, launch_shared);
        } else {
            s << "    " << kernel.name << "_kernel<<<(unsigned)blocks, " << threads << ", " << launch_shared << ", stream>>>(";
            for (size_t i = 0; i < kernel.buffers.size(); i++) s << kernel.buffers[i].name << ", ";
            s << "warps);\n    const cudaError_t launched = cudaGetLastError();\n";
        }
        if (constant) {
            s << "    // The next call fills constant memory after this launch has read it.\n";
            s << "    const cudaError_t recorded = cudaEventRecord(constant_read, stream);\n";
            s << "    return launched != cudaSuccess ? launched : recorded;\n}\n";
        } else {
            s << "    return launched;\n}\n";
        }
        s << launch_info(threads, launch_shared);
        return s.str();
    }

    /// The block arrays, and the block setup that fills them: every warp of
    /// the block, before those past the grid leave, then __syncthreads.
    std::string block_setup() {
        if (kernel.block_arrays.empty()) return "";
        std::ostringstream s;
        for (const kir::BlockArray &a : kernel.block_arrays) {
            const std::string n = c_name(a.name), T = c_type(a.type);
            if (dynamic_shared) {
                s << "    " << T << " *const " << n << " = (" << T << " *)(pulse_shared + " << shared_offset << ");  // one for the block\n";
                shared_offset += (a.elements * a.type.bytes() + 15) / 16 * 16;
            } else {
                s << "    __shared__ __align__(16) " << T << " " << n << "[" << a.elements << "];  // one for the block\n";
            }
        }
        s << "    {  // filled by the whole block, then only read\n";
        s << "        const int " << c_name(kir::block_warp_var) << " = threadIdx.x / 32;\n";
        out.str("");
        stmt(kernel.block_setup, 2);
        s << out.str() << "    }\n    __syncthreads();\n";
        return s.str();
    }

    /// NAME_launch_info: what the kernel's launches are, for users who tune.
    std::string launch_info(int threads, int64_t launch_shared) const {
        std::ostringstream s;
        const std::string &n = kernel.name;
        s << "\nextern \"C\" cudaError_t " << n << "_launch_info(pulse_launch_info *info) {\n";
        s << "    if (info == nullptr) return " << n << "_refuse(cudaErrorInvalidValue, \"launch_info: info is a null pointer\");\n";
        s << "    cudaFuncAttributes attributes;\n";
        s << "    cudaError_t e = cudaFuncGetAttributes(&attributes, " << n << "_kernel);\n";
        s << "    if (e != cudaSuccess) return e;\n";
        if (launch_shared > kir::shared_bytes_per_block) {
            s << "    e = cudaFuncSetAttribute(" << n << "_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, " << launch_shared << ");\n";
            s << "    if (e != cudaSuccess) return e;\n";
        }
        s << "    int blocks = 0;\n";
        s << "    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, " << n << "_kernel, " << threads << ", " << launch_shared
          << ");\n    if (e != cudaSuccess) return e;\n";
        s << "    info->threads_per_block = " << threads << ";\n";
        s << "    info->registers_per_thread = attributes.numRegs;\n";
        s << "    info->static_shared_bytes = (int64_t)attributes.sharedSizeBytes;\n";
        s << "    info->dynamic_shared_bytes = " << launch_shared << ";\n";
        s << "    info->blocks_per_sm = blocks;\n";
        s << "    info->cooperative = " << (kernel.grid_sync ? 1 : 0) << ";\n";
        s << "    return cudaSuccess;\n}\n";
        return s.str();
    }

    /// gpu_grid_sync: the exchange arrays allocated for the launch (stream
    /// ordered, so calls on several streams each have their own), then a
    /// cooperative launch, which fails with cudaErrorCooperativeLaunchTooLarge
    /// unless every block fits on the GPU at once.
    std::string grid_synchronised_launch(int threads, int64_t launch_shared) const {
        std::ostringstream s;
        s << "    // Every block resident at once (a cooperative launch), meeting at grid barriers; the values\n"
             "    // that cross blocks go through these arrays, allocated for this launch.\n";
        std::vector<std::string> arrays;
        for (const kir::GridExchange &x : kernel.grid_exchanges) {
            const std::string n = c_name(x.name), T = c_type(x.type);
            s << "    " << T << " *" << n << " = nullptr;\n";
            arrays.push_back(n);
        }
        s << "    cudaError_t e = cudaSuccess;\n";
        for (const kir::GridExchange &x : kernel.grid_exchanges) {
            s << "    if (e == cudaSuccess) e = cudaMallocAsync((void **)&" << c_name(x.name) << ", (size_t)warps * "
              << x.slots * x.per_instance << " * sizeof(" << c_type(x.type) << "), stream);\n";
        }
        s << "    if (e == cudaSuccess) {\n        void *arguments[] = {";
        for (const kir::BufferArg &b : kernel.buffers) s << "&" << b.name << ", ";
        for (const std::string &n : arrays) s << "&" << n << ", ";
        s << "(void *)&warps};\n";
        s << "        e = cudaLaunchCooperativeKernel((const void *)" << kernel.name << "_kernel, dim3((unsigned)blocks), dim3(" << threads
          << "), arguments, " << launch_shared << ", stream);\n";
        s << "        if (e != cudaSuccess) (void)cudaGetLastError();  // a refused launch leaves no error for later calls\n    }\n";
        for (const std::string &n : arrays) s << "    if (" << n << ") cudaFreeAsync(" << n << ", stream);\n";
        s << "    const cudaError_t launched = e;\n";
        return s.str();
    }

    bool has_constant_inputs() const {
        for (const kir::BufferArg &b : kernel.buffers) {
            if (b.placement == kir::Placement::Constant) return true;
        }
        return false;
    }

    /// The harness's test of calls on two streams at once: the inputs in
    /// constant memory negated on the second stream, every call writing
    /// outputs of its own, each checked against its reference. A kernel whose
    /// constant memory were filled by one call while another's kernel still
    /// read it would fail here.
    std::string reentrancy_check() const {
        std::ostringstream s;
        const std::string &n = kernel.name;
        const int calls = 8;  // per stream
        s << "    // Reentrancy: " << calls << " calls on each of two streams at once, the inputs in constant memory\n"
             "    // negated on the second; every call writes outputs of its own, each checked.\n";
        s << "    {\n        cudaStream_t streams[2];\n";
        s << "        for (cudaStream_t &st : streams) PULSE_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));\n";
        std::vector<std::string> first_args, second_args, reference_args;
        for (const kir::BufferArg &b : kernel.buffers) {
            if (b.is_output) continue;
            const std::string T = c_type(b.type), m = b.name;
            if (b.placement == kir::Placement::Constant) {
                s << "        HostArray<" << T << "> " << m << "_host2(" << m << "_host);\n";
                s << "        for (auto &v : " << m << "_host2) v = (" << T << ")(-v);\n";
                s << "        DeviceBuffer<" << T << "> " << m << "_device2(" << m << "_count);\n";
                s << "        PULSE_CUDA_CHECK(cudaMemcpy(" << m << "_device2.data(), " << m << "_host2.data(), " << m << "_count * sizeof(" << T
                  << "), cudaMemcpyHostToDevice));\n";
                s << "        pulse_buffer " << m << "_second = " << m << ";\n        " << m << "_second.data = " << m << "_device2.data();\n";
                reference_args.push_back(m + "_host2.data()");
            } else {
                s << "        const pulse_buffer " << m << "_second = " << m << ";\n";
                reference_args.push_back(m + "_host.data()");
            }
            first_args.push_back(m);
            second_args.push_back(m + "_second");
        }
        for (const kir::BufferArg &b : kernel.buffers) {
            if (!b.is_output) continue;
            const std::string T = c_type(b.type), m = b.name;
            s << "        HostArray<" << T << "> " << m << "_expected2(" << m << "_count);\n";
            s << "        std::vector<DeviceBuffer<" << T << ">> " << m << "_calls;\n";
            s << "        for (int c = 0; c < " << 2 * calls << "; c++) " << m << "_calls.emplace_back(" << m << "_count);\n";
            reference_args.push_back(m + "_expected2.data()");
        }
        s << "        " << n << "_reference(";
        for (const std::string &a : reference_args) s << a << ", ";
        s << "instances);\n";
        s << "        for (int c = 0; c < " << 2 * calls << "; c++) {\n";
        for (const kir::BufferArg &b : kernel.buffers) {
            if (!b.is_output) continue;
            const std::string &m = b.name;
            s << "            const pulse_buffer " << m << "_out = " << n << "_" << m << "_buffer(" << m << "_calls[c].data(), instances);\n";
            first_args.push_back(m + "_out");
            second_args.push_back(m + "_out");
        }
        auto call = [&](const std::vector<std::string> &args, const std::string &stream) {
            std::string text = n + "(";
            for (const std::string &a : args) text += a + ", ";
            return text + stream + ")";
        };
        s << "            PULSE_CUDA_CHECK(c % 2 ? " << call(second_args, "streams[1]") << " : " << call(first_args, "streams[0]") << ");\n";
        s << "        }\n        PULSE_CUDA_CHECK(cudaDeviceSynchronize());\n";
        for (const kir::BufferArg &b : kernel.buffers) {
            if (!b.is_output) continue;
            const std::string T = c_type(b.type), m = b.name;
            s << "        for (int c = 0; c < " << 2 * calls << "; c++) {\n";
            s << "            HostArray<" << T << "> got(" << m << "_count);\n";
            s << "            PULSE_CUDA_CHECK(cudaMemcpy(got.data(), " << m << "_calls[c].data(), " << m << "_count * sizeof(" << T
              << "), cudaMemcpyDeviceToHost));\n";
            s << "            const HostArray<" << T << "> &want = c % 2 ? " << m << "_expected2 : " << m << "_host;\n";
            s << "            for (size_t i = 0; i < " << m << "_count; i++) {\n";
            s << "                if (!same(want[i], got[i]) && failures++ < 10) std::printf(\"" << n << ": " << m
              << "[%zu] of call %d on stream %d: got %.9g, expected %.9g\\n\", i, c / 2, c % 2, (double)got[i], (double)want[i]);\n";
            s << "            }\n        }\n";
        }
        s << "        for (cudaStream_t st : streams) PULSE_CUDA_CHECK(cudaStreamDestroy(st));\n    }\n";
        return s.str();
    }

    std::string check() const {
        std::ostringstream s;
        const std::string &n = kernel.name;
        s << "// Checks " << n << " against " << n << "_reference.h on random inputs: at the spec's sizes, and\n"
             "// with every output extent one smaller (tails), outputs NaN-poisoned first; the part of a\n"
             "// cropped output outside its extents must stay poisoned. `--bench` times the full size.\n"
             "// usage: "
          << n << "_check [instances] [--bench]\n";
        s << "#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <random>\n#include <string>\n"
             "#include <vector>\n\n#include \"pulse_cuda.h\"\n#include \""
          << n << ".h\"\n#include \"" << n << "_reference.h\"\n\n";
        s << "using pulse::cuda::DeviceBuffer;\nusing pulse::cuda::HostArray;  // (std::vector<bool> has no bool *data())\n\n";
        // The same bits are the same value: the poison of an element the
        // reference leaves unwritten (past a ragged instance's bound) too.
        s << "template <typename T> static bool same(T a, T b) {\n"
             "    if (std::memcmp(&a, &b, sizeof a) == 0) return true;\n"
             "    if constexpr (std::is_floating_point_v<T>) return std::fabs((double)a - (double)b) <= 1e-4 * std::max(1.0, std::fabs((double)a));\n"
             "    else return a == b;\n}\n\n";
        s << "int main(int argc, char **argv) {\n";
        s << "    int64_t instances = " << n << "_default_instances();\n    bool bench = false;\n";
        s << "    for (int i = 1; i < argc; i++) {\n        if (std::string(argv[i]) == \"--bench\") bench = true;\n"
             "        else instances = std::atoll(argv[i]);\n    }\n";
        s << "    std::mt19937 rng(7);\n    std::uniform_real_distribution<double> unit(0.25, 1.0);\n";
        for (const kir::BufferArg &b : kernel.buffers) {
            const std::string T = c_type(b.type);
            s << "    // " << (b.is_output ? "output " : "input ") << b.name << "\n";
            s << "    int64_t " << b.name << "_min[" << b.dimensions << "], " << b.name << "_extent[" << b.dimensions << "];\n";
            s << "    size_t " << b.name << "_count = 1;\n";
            s << "    for (int pulse_d = 0; pulse_d < " << b.dimensions << "; pulse_d++) {\n";
            s << "        " << n << "_" << b.name << "_region(pulse_d, instances, &" << b.name << "_min[pulse_d], &" << b.name << "_extent[pulse_d]);\n";
            s << "        " << b.name << "_count *= (size_t)" << b.name << "_extent[pulse_d];\n    }\n";
            s << "    HostArray<" << T << "> " << b.name << "_host(" << b.name << "_count);\n";
            if (!b.is_output) {
                s << "    for (auto &v : " << b.name << "_host) v = (" << T << ")((rng() & 1 ? 1 : -1) * unit(rng) * "
                  << (b.type.is_float() ? "1.0" : "9.0") << ");\n";
                s << "    DeviceBuffer<" << T << "> " << b.name << "_device(" << b.name << "_count);\n";
                s << "    PULSE_CUDA_CHECK(cudaMemcpy(" << b.name << "_device.data(), " << b.name << "_host.data(), " << b.name
                  << "_count * sizeof(" << T << "), cudaMemcpyHostToDevice));\n";
                s << "    const pulse_buffer " << b.name << " = " << n << "_" << b.name << "_buffer(" << b.name << "_device.data(), instances);\n";
            } else {
                // Poisoned as the device's copy is below, so that an element
                // the reference does not write must stay poisoned there too.
                s << "    std::memset(" << b.name << "_host.data(), 0xff, " << b.name << "_count * sizeof(" << T << "));\n";
                s << "    DeviceBuffer<" << T << "> " << b.name << "_device(" << b.name << "_count);\n";
            }
        }
        s << "    " << n << "_reference(";
        bool first = true;
        for (const kir::BufferArg &b : kernel.buffers) s << (first ? "" : ", ") << b.name << "_host.data()", first = false;
        s << ", instances);\n";
        s << "    int failures = 0;\n";
        s << "    for (int crop = 0; crop <= 1; crop++) {\n";
        for (const kir::BufferArg &b : kernel.buffers) {
            if (!b.is_output) continue;
            const std::string T = c_type(b.type);
            s << "        PULSE_CUDA_CHECK(cudaMemset(" << b.name << "_device.data(), 0xff, " << b.name << "_count * sizeof(" << T << ")));\n";
            s << "        pulse_buffer " << b.name << " = " << n << "_" << b.name << "_buffer(" << b.name << "_device.data(), instances);\n";
            s << "        for (int pulse_d = 0; pulse_d < " << b.dimensions << "; pulse_d++) " << b.name << ".extent[pulse_d] -= crop && " << b.name
              << ".extent[pulse_d] > 1 ? 1 : 0;\n";
        }
        // The host function refuses a buffer of other dimensions than the kernel indexes
        // (unless its checks are compiled out).
        s << "#ifndef PULSE_NO_HOST_CHECKS\n";
        s << "        if (crop == 0) {\n            for (int wrong = 0; wrong < " << kernel.buffers.size() << "; wrong++) {\n";
        s << "                pulse_buffer args[] = {";
        first = true;
        for (const kir::BufferArg &b : kernel.buffers) s << (first ? "" : ", ") << b.name, first = false;
        s << "};\n                args[wrong].dimensions -= 1;\n";
        s << "                if (" << n << "(";
        for (size_t i = 0; i < kernel.buffers.size(); i++) s << "args[" << i << "], ";
        s << "0) != cudaErrorInvalidValue && failures++ < 10)\n"
          << "                    std::printf(\"" << n << ": argument %d with one dimension fewer was not refused\\n\", wrong);\n";
        // The refusal says which buffer, in words.
        s << "                const char *names[] = {";
        first = true;
        for (const kir::BufferArg &b : kernel.buffers) s << (first ? "" : ", ") << "\"" << (b.is_output ? "output " : "input ") << b.name << ":\"", first = false;
        s << "};\n";
        s << "                if (std::strstr(" << n << "_last_refusal(), names[wrong]) == nullptr && failures++ < 10)\n"
          << "                    std::printf(\"" << n << ": the refusal of argument %d does not name it: %s\\n\", wrong, " << n
          << "_last_refusal());\n";
        s << "            }\n";
        // An output in an input's memory is refused, naming the overlap.
        const kir::BufferArg *first_input = nullptr, *first_output = nullptr;
        for (const kir::BufferArg &b : kernel.buffers) {
            if (!b.is_output && !first_input) first_input = &b;
            if (b.is_output && !first_output) first_output = &b;
        }
        if (first_input && first_output) {
            s << "            pulse_buffer aliased = " << first_output->name << ";\n            aliased.data = " << first_input->name << ".data;\n";
            s << "            if (" << n << "(";
            for (const kir::BufferArg &b : kernel.buffers) s << (&b == first_output ? std::string("aliased") : b.name) << ", ";
            s << "0) != cudaErrorInvalidValue || std::strstr(" << n << "_last_refusal(), \"overlaps\") == nullptr) {\n";
            s << "                if (failures++ < 10) std::printf(\"" << n << ": output " << first_output->name << " in input " << first_input->name
              << "'s memory was not refused as overlapping: %s\\n\", " << n << "_last_refusal());\n            }\n";
        }
        // A buffer in global memory whose first dimension is not dense is refused.
        for (const kir::BufferArg &b : kernel.buffers) {
            if (b.placement != kir::Placement::Global || !kernel.dense_first_dimension) continue;
            s << "            {\n                pulse_buffer strided = " << b.name << ";\n                strided.stride[0] = 2;\n";
            s << "                if (" << n << "(";
            for (const kir::BufferArg &a : kernel.buffers) s << (&a == &b ? std::string("strided") : a.name) << ", ";
            s << "0) != cudaErrorInvalidValue || std::strstr(" << n << "_last_refusal(), \"" << (b.is_output ? "output " : "input ") << b.name
              << ": its first dimension has a stride other than 1\") == nullptr) {\n";
            s << "                    if (failures++ < 10) std::printf(\"" << n << ": " << b.name << " with stride 2 in dimension 0 was not refused: %s\\n\", "
              << n << "_last_refusal());\n                }\n            }\n";
            break;
        }
        // An input without the indices the outputs read is refused, with the numbers.
        for (const kir::BufferArg &b : kernel.buffers) {
            size_t d = 0;
            while (d < b.required.size() && !b.required[d]) d++;
            if (d == b.required.size()) continue;
            s << "            {\n                pulse_buffer empty = " << b.name << ";\n                empty.extent[" << d << "] = 0;\n";
            s << "                if (" << n << "(";
            for (const kir::BufferArg &a : kernel.buffers) s << (&a == &b ? std::string("empty") : a.name) << ", ";
            s << "0) != cudaErrorInvalidValue || std::strstr(" << n << "_last_refusal(), \"input " << b.name
              << ": holds\") == nullptr || std::strstr(" << n << "_last_refusal(), \"the outputs' extents read\") == nullptr) {\n";
            s << "                    if (failures++ < 10) std::printf(\"" << n << ": input " << b.name << " with no elements in dimension " << d
              << " was not refused: %s\\n\", " << n << "_last_refusal());\n                }\n            }\n";
            break;
        }
        s << "        }\n#endif\n";
        s << "        PULSE_CUDA_CHECK(" << n << "(";
        first = true;
        for (const kir::BufferArg &b : kernel.buffers) s << (first ? "" : ", ") << b.name, first = false;
        s << ", 0));\n        PULSE_CUDA_CHECK(cudaDeviceSynchronize());\n";
        s << "        if (" << n << "_last_refusal()[0] != 0 && failures++ < 10) std::printf(\"" << n
          << ": a call that ran left a refusal: %s\\n\", " << n << "_last_refusal());\n";
        for (const kir::BufferArg &b : kernel.buffers) {
            if (!b.is_output) continue;
            const std::string T = c_type(b.type);
            s << "        {\n            HostArray<" << T << "> got(" << b.name << "_count);\n";
            s << "            PULSE_CUDA_CHECK(cudaMemcpy(got.data(), " << b.name << "_device.data(), " << b.name << "_count * sizeof(" << T
              << "), cudaMemcpyDeviceToHost));\n";
            s << "            " << T << " poison;\n            std::memset(&poison, 0xff, sizeof poison);\n";
            s << "            for (size_t i = 0; i < " << b.name << "_count; i++) {\n";
            s << "                size_t rest = i;\n                bool inside = true;\n";
            s << "                for (int pulse_d = 0; pulse_d < " << b.dimensions << "; pulse_d++) {\n"
              << "                    inside = inside && (int64_t)(rest % " << b.name << "_extent[pulse_d]) < " << b.name << ".extent[pulse_d];\n"
              << "                    rest /= " << b.name << "_extent[pulse_d];\n                }\n";
            s << "                bool ok = inside ? same(" << b.name << "_host[i], got[i]) : std::memcmp(&got[i], &poison, sizeof poison) == 0;\n";
            s << "                if (!ok && failures++ < 10) std::printf(\"" << n << ": " << b.name
              << "[%zu]%s: got %.9g, expected %.9g\\n\", i, inside ? \"\" : \" (outside the cropped extents)\", (double)got[i], "
                 "(double)(inside ? "
              << b.name << "_host[i] : poison));\n";
            s << "            }\n        }\n";
        }
        s << "    }\n";
        // The launch-info query answers for this device.
        s << "    {\n        pulse_launch_info info = {};\n        PULSE_CUDA_CHECK(" << n << "_launch_info(&info));\n";
        s << "        if ((info.threads_per_block < 32 || info.registers_per_thread < 1 || info.blocks_per_sm < 1) && failures++ < 10)\n"
          << "            std::printf(\"" << n << ": launch_info says %d threads, %d registers, %d blocks per SM\\n\", "
             "info.threads_per_block, info.registers_per_thread, info.blocks_per_sm);\n    }\n";
        const bool reentrancy = has_constant_inputs();
        if (reentrancy) s << reentrancy_check();
        s << "    std::printf(\"" << n << ": %s (instances %lld; full and cropped outputs" << (reentrancy ? "; two streams at once" : "")
          << ")\\n\", failures ? \"FAIL\" : \"PASS\", (long long)instances);\n";
        s << "    if (bench && !failures) {\n";
        for (const kir::BufferArg &b : kernel.buffers) {
            if (!b.is_output) continue;
            s << "        const pulse_buffer " << b.name << " = " << n << "_" << b.name << "_buffer(" << b.name << "_device.data(), instances);\n";
        }
        s << "        cudaEvent_t start, stop;\n        cudaEventCreate(&start);\n        cudaEventCreate(&stop);\n";
        s << "        std::vector<float> ms;\n        for (int r = 0; r < 25; r++) {\n            cudaEventRecord(start);\n";
        s << "            " << n << "(";
        first = true;
        for (const kir::BufferArg &b : kernel.buffers) s << (first ? "" : ", ") << b.name, first = false;
        s << ", 0);\n            cudaEventRecord(stop);\n            cudaEventSynchronize(stop);\n            float t;\n"
             "            cudaEventElapsedTime(&t, start, stop);\n            if (r >= 5) ms.push_back(t);\n        }\n";
        s << "        std::sort(ms.begin(), ms.end());\n        std::printf(\"" << n << ": median %.4f ms\\n\", ms[ms.size() / 2]);\n    }\n";
        s << "    return failures ? 1 : 0;\n}\n";
        return s.str();
    }

};

}  // namespace

HostHeaderText host_header_text(const ir::UreProgram &program, const std::string &name,
                                const std::vector<std::string> &input_order, const std::string &purpose) {
    return HostHeaderText{purpose, describe_buffers(program, name, input_order),
                          emit_layout_functions(program, name, input_order, "static inline")};
}

CudaKernelSources print_cuda(const kir::Kernel &kernel, const HostHeaderText &text) {
    // The host function's and the kernel's own names: a buffer named like one
    // would not compile (or would be shadowed).
    static const std::set<std::string> host_names = {
        "lane", "warp_index", "array_warp", "warps", "stream", "blocks", "e", "elements", "device", "read",
        "constant_read", "launched", "recorded", "opt_in", "row", "rows", "row_elements", "offset", "rest",
        "contiguous", "region_min", "region_extent", "attributes", "info", "arguments", "pulse_d"};
    for (const kir::BufferArg &b : kernel.buffers) {
        if (host_names.count(b.name) || b.name.rfind("pulse_", 0) == 0) {
            compile_error("kernel ", kernel.name, ": ", b.is_output ? "output " : "input ", b.name, " is named like a variable of the ",
                          "generated CUDA host code; rename it in the spec (the names taken: lane, warp_index, warps, stream, ",
                          "blocks, e, elements, device, offset, row, rows, rest, info and the other locals of NAME.cu, and names ",
                          "that start with pulse_)");
        }
    }
    CudaKernelSources sources;
    kir::on_large_stack([&] {
        CudaPrinter printer(kernel);
        sources.header = printer.header(text);
        sources.kernel = printer.source();
        sources.check = printer.check();
    });
    return sources;
}

std::vector<GeneratedFile> print_cuda_files(const kir::Kernel &kernel, const ir::UreProgram &source,
                                            const std::vector<std::string> &input_order, const std::string &purpose) {
    const std::string &name = kernel.name;
    CudaKernelSources sources = print_cuda(kernel, host_header_text(source, name, input_order, purpose));
    return {{name + ".h", sources.header},
            {name + ".cu", sources.kernel},
            {name + "_check.cu", sources.check},
            {name + "_reference.h", emit_reference_cpp(source, name, input_order)}};
}

}  // namespace pulse
