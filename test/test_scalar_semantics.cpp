// One scalar semantics (docs/language.md, pulse/ScalarSemantics.h) on every
// evaluator: random expressions over every type of the language, on inputs
// full of edge values (0, -0, +-1, the integer extremes, NaN, infinities,
// subnormals, floats beyond every integer range, halves), computed by the
// reference interpreter, the systolic simulator, the kernel executor, the
// compiled C++ reference and the CM emulation, compared bit for bit (a NaN
// equals any NaN: its sign and payload are not specified).
//
// PULSE_SCALAR_SEED=s starts the draw elsewhere; PULSE_RANDOM_SCALE=n draws n
// times the batches; PULSE_SCALAR_CUDA_DIR=DIR also writes each batch's CUDA
// kernel and a bit-for-bit check of it into DIR/batchSEED for a GPU
// (scripts/gpu_scalar_semantics.sh).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <type_traits>
#include <unistd.h>

#include "codegen/CodeGenC.h"
#include "codegen/CodeGenCM.h"
#include "Emit.h"
#include "codegen/CodeGenCudaKernel.h"
#include "codegen/CodeGenReference.h"
#include "exec/KernelExecutor.h"
#include "exec/Simulator.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "TestUtil.h"
#include "pulse/ScalarSemantics.h"

using namespace pulse;
using Halide::Type;

namespace {

constexpr int lanes = 32;  // one array of 32 PEs: every input element is one PE's operand

const std::vector<Type> all_types = {Halide::Int(8),   Halide::Int(16),  Halide::Int(32),  Halide::Int(64),
                                     Halide::UInt(8),  Halide::UInt(16), Halide::UInt(32), Halide::UInt(64),
                                     Halide::Float(32), Halide::Float(64)};
/// What the CM backend moves in and out of memory (dword scattered reads and writes).
const std::vector<Type> dword_types = {Halide::Int(32), Halide::UInt(32), Halide::Float(32)};

std::string type_name(Type t) {
    std::ostringstream s;
    s << t;
    return s.str();
}

/// Random well-typed expressions over the inputs (two of each type).
class ExprDrawer {
public:
    ExprDrawer(std::mt19937 &rng, const std::map<std::string, Input> &inputs, const Expr &index, bool float_mod)
        : rng(rng), inputs(inputs), index(index), float_mod(float_mod) {}

    Expr draw(Type t, int depth) {
        if (t.is_bool()) return condition(depth);
        if (depth <= 0 || pick(4) == 0) return leaf(t);
        switch (pick(10)) {
        case 0: return draw(t, depth - 1) + draw(t, depth - 1);
        case 1: return draw(t, depth - 1) - draw(t, depth - 1);
        case 2: return draw(t, depth - 1) * draw(t, depth - 1);
        case 3: return draw(t, depth - 1) / draw(t, depth - 1);
        case 4:
            if (t.is_float() && !float_mod) return draw(t, depth - 1) / draw(t, depth - 1);
            return draw(t, depth - 1) % draw(t, depth - 1);
        case 5: return pick(2) ? Halide::min(draw(t, depth - 1), draw(t, depth - 1)) : Halide::max(draw(t, depth - 1), draw(t, depth - 1));
        case 6: return Halide::select(condition(depth - 1), draw(t, depth - 1), draw(t, depth - 1));
        case 7: {
            // A cast from another type (constants excluded: Halide folds them itself).
            Type from = pick(5) == 0 ? Halide::Bool() : all_types[pick((int)all_types.size())];
            Expr e = from.is_bool() ? condition(depth - 1) : draw(from, depth - 1);
            if (is_const(e)) e = leaf(from.is_bool() ? t : from);
            return Halide::cast(t, e);
        }
        case 8:
            // Saturating + and - of integers (a float's are + and -).
            if (t.is_float()) return draw(t, depth - 1) - draw(t, depth - 1);
            return pick(2) ? saturating_add(draw(t, depth - 1), draw(t, depth - 1)) : saturating_sub(draw(t, depth - 1), draw(t, depth - 1));
        default: {
            // abs: a signed integer's is the unsigned integer of its width.
            if (t.is_uint()) return Halide::abs(draw(t.with_code(Halide::Type::Int), depth - 1));
            if (t.is_int()) return Halide::cast(t, Halide::abs(draw(t, depth - 1)));
            return Halide::abs(draw(t, depth - 1));
        }
        }
    }

private:
    std::mt19937 &rng;
    const std::map<std::string, Input> &inputs;
    Expr index;
    bool float_mod;

    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

    Expr leaf(Type t) {
        if (!t.is_float() && pick(6) == 0) {
            // An integer constant, an edge one half the time.
            const int64_t lo = t.is_int() ? -(int64_t(1) << std::min(62, t.bits() - 1)) : 0;
            const int64_t edges[] = {0, 1, 2, 3, -1, -2, lo};
            int64_t v = pick(2) ? edges[pick(7)] : pick(200) - 100;
            if (t.is_uint() && v < 0) v = -v;
            return Halide::Internal::make_const(t, v);
        }
        const std::string name = "in_" + type_name(t) + (pick(2) ? "_a" : "_b");
        auto it = inputs.find(name);
        if (it != inputs.end()) return it->second(index);
        // No input of this type: one of another type, converted.
        auto other = inputs.begin();
        std::advance(other, pick((int)inputs.size()));
        return Halide::cast(t, other->second(index));
    }

    Expr condition(int depth) {
        if (depth > 0 && pick(4) == 0) {
            Expr a = condition(depth - 1), b = condition(depth - 1);
            switch (pick(3)) {
            case 0: return a && b;
            case 1: return a || b;
            default: return !a;
            }
        }
        Type t = all_types[pick((int)all_types.size())];
        Expr a = draw(t, depth - 1), b = draw(t, depth - 1);
        switch (pick(6)) {
        case 0: return a == b;
        case 1: return a != b;
        case 2: return a < b;
        case 3: return a <= b;
        case 4: return a > b;
        default: return a >= b;
        }
    }
};

/// Edge values of type t, then random ones, `lanes` in all.
template<typename T>
std::vector<T> edge_values(std::mt19937 &rng) {
    std::vector<T> v;
    using L = std::numeric_limits<T>;
    if constexpr (std::is_floating_point_v<T>) {
        v = {0, -T(0), 1, -1, T(0.5), T(-0.5), T(1.5), T(-2.5), L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(),
             L::max(), L::lowest(), L::denorm_min(), -L::denorm_min(), L::min(), T(128), T(-129), T(255.5), T(65536),
             T(2147483648.0), T(-2147483904.0), T(4294967296.0), T(9.3e18), T(-9.3e18), T(1.9e19)};
        std::uniform_real_distribution<double> d(-300, 300);
        while ((int)v.size() < lanes) v.push_back((T)d(rng));
    } else {
        v = {0, 1, T(2), T(-1), T(-2), L::max(), L::min(), T(L::max() - 1), T(L::min() + 1), T(L::max() / 2 + 1), T(7), T(-7)};
        std::uniform_int_distribution<int64_t> d(-1000, 1000);
        while ((int)v.size() < lanes) v.push_back((T)d(rng));
    }
    std::shuffle(v.begin(), v.end(), rng);
    return v;
}

template<typename F>
auto with_type(Type t, F f) {
    if (t == Halide::Int(8)) return f(int8_t());
    if (t == Halide::Int(16)) return f(int16_t());
    if (t == Halide::Int(32)) return f(int32_t());
    if (t == Halide::Int(64)) return f(int64_t());
    if (t == Halide::UInt(8)) return f(uint8_t());
    if (t == Halide::UInt(16)) return f(uint16_t());
    if (t == Halide::UInt(32)) return f(uint32_t());
    if (t == Halide::UInt(64)) return f(uint64_t());
    if (t == Halide::Float(32)) return f(float());
    return f(double());
}

/// A batch: `count` outputs, each a random expression of a random type.
struct Batch {
    ir::UreProgram program;
    std::vector<std::string> input_order;
    std::vector<std::string> expressions;  ///< the text of each output's value
    Buffers inputs;
};

/// The program of `outs` (each written at b * lanes + c): one array of
/// `lanes` PEs, its loop nest owned by a recurrence that holds the PE's index.
ir::UreProgram program_of(std::vector<Func> &outs, const Var &c, const Var &b) {
    Var q("q"), s("s"), t("t");
    Func first(Halide::Int(32), {c, q, b}, Place::Device, "Pe");
    first(c, q, b) = c;
    first.merge_ures(outs).set_bounds(c, 0, lanes, q, 0, 1, b, 0, 1);
    first.gpu_blocks(b);
    first.space_time_transform({c, q}, {s, t}, {1, 0, /**/ 0, 1});
    return first.lower();
}

Batch draw_batch(uint32_t seed, int count, const std::vector<Type> &io_types, bool float_mod) {
    std::mt19937 rng(seed);
    Var c("c"), b("b");
    std::map<std::string, Input> inputs;
    Batch batch;
    for (Type ty : io_types) {
        for (const char *which : {"_a", "_b"}) {
            const std::string name = "in_" + type_name(ty) + which;
            inputs.emplace(name, Input(ty, 1, name));
            batch.input_order.push_back(name);
        }
    }
    // Intermediate types come from casts; the leaves are inputs of the I/O types.
    std::map<std::string, Input> leaves = inputs;
    ExprDrawer drawer(rng, leaves, b * lanes + c, float_mod);
    std::vector<Func> outs;
    for (int k = 0; k < count; k++) {
        Type ty = io_types[std::uniform_int_distribution<int>(0, (int)io_types.size() - 1)(rng)];
        Expr e;
        // Every leaf is an input of an I/O type: draw from those, casting to the rest.
        do {
            e = drawer.draw(ty, 3);
        } while (is_const(e));
        Func out(Place::Device, "Out" + std::to_string(k));
        out(b * lanes + c) = e;
        outs.push_back(out);
        batch.expressions.push_back(ir::to_source(e));
    }
    batch.program = program_of(outs, c, b);
    // Inputs no expression reads are not the program's.
    std::vector<std::string> read;
    for (const std::string &name : batch.input_order) {
        for (const ir::InputDecl &in : batch.program.inputs) {
            if (in.name == name) read.push_back(name);
        }
    }
    batch.input_order = read;
    for (const auto &[name, in] : inputs) {
        Halide::Buffer<> buffer(in.type(), {lanes}, name);
        with_type(in.type(), [&](auto tag) {
            using T = decltype(tag);
            std::vector<T> values = edge_values<T>(rng);
            std::memcpy(buffer.raw_buffer()->host, values.data(), sizeof(T) * lanes);
            return 0;
        });
        batch.inputs[name] = buffer;
    }
    return batch;
}

/// The bytes of a dense output buffer.
std::vector<uint8_t> bytes_of(const Halide::Buffer<> &b) {
    const uint8_t *p = (const uint8_t *)b.raw_buffer()->host;
    return std::vector<uint8_t>(p, p + b.size_in_bytes());
}

/// "" if `got` equals `want` bit for bit (NaN equal to NaN), else the first difference.
std::string compare_bits(Type t, const std::vector<uint8_t> &want, const std::vector<uint8_t> &got) {
    if (want.size() != got.size()) return "size " + std::to_string(got.size()) + " instead of " + std::to_string(want.size());
    const size_t width = t.bytes();
    for (size_t i = 0; i < want.size() / width; i++) {
        const uint8_t *w = &want[i * width], *g = &got[i * width];
        if (std::memcmp(w, g, width) == 0) continue;
        Scalar ws, gs;
        with_type(t, [&](auto tag) {
            using T = decltype(tag);
            T a, b;
            std::memcpy(&a, w, width);
            std::memcpy(&b, g, width);
            if constexpr (std::is_floating_point_v<T>) {
                ws = Scalar::of_double(a), gs = Scalar::of_double(b);
            } else if constexpr (std::is_signed_v<T>) {
                ws = Scalar::of_int(a), gs = Scalar::of_int(b);
            } else {
                ws = Scalar::of_uint(a), gs = Scalar::of_uint(b);
            }
            return 0;
        });
        if (t.is_float() && std::isnan(ws.as_double()) && std::isnan(gs.as_double())) continue;
        return "element " + std::to_string(i) + " is " + scalar_text(gs, t) + ", expected " + scalar_text(ws, t);
    }
    return "";
}

std::filesystem::path temp_dir() {
    char pattern[] = "/tmp/pulse_scalar_XXXXXX";
    const char *dir = mkdtemp(pattern);
    REQUIRE(dir != nullptr);
    return dir;
}

/// A driver that reads the inputs (raw, dense), runs the emitted C++
/// reference and, if `cm`, the CM kernel on the emulation, and writes each
/// output as OUT.ref and OUT.cm.
std::string driver(const Batch &batch, const std::string &name, bool cm, const kir::Kernel *kernel) {
    std::ostringstream s;
    s << "#include <cstdio>\n#include <vector>\n";
    if (cm) s << "#include <cm/cm.h>\n#include \"" << name << "_genx.cpp\"\n";
    s << "#include \"" << name << "_reference.h\"\n";
    s << "template <typename T> static std::vector<T> load(const char *f) { std::vector<T> v(" << lanes
      << "); FILE *h = std::fopen(f, \"rb\"); if (std::fread(v.data(), sizeof(T), v.size(), h) != v.size()) return {}; std::fclose(h); return v; }\n";
    s << "template <typename T> static void save(const char *f, const std::vector<T> &v) { FILE *h = std::fopen(f, \"wb\"); "
         "std::fwrite(v.data(), sizeof(T), v.size(), h); std::fclose(h); }\n";
    s << "int main() {\n";
    for (const std::string &in : batch.input_order) {
        s << "    std::vector<" << c_type(batch.inputs.at(in).type()) << "> " << in << " = load<" << c_type(batch.inputs.at(in).type())
          << ">(\"" << in << ".bin\");\n";
    }
    std::vector<const ir::Ure *> outs = batch.program.outputs();
    for (const ir::Ure *u : outs) s << "    std::vector<" << c_type(u->type) << "> " << u->name << "(" << lanes << ");\n";
    s << "    " << name << "_reference(";
    for (const std::string &in : batch.input_order) s << in << ".data(), ";
    for (const ir::Ure *u : outs) s << u->name << ".data(), ";
    s << "1);\n";
    for (const ir::Ure *u : outs) s << "    save(\"" << u->name << ".ref\", " << u->name << ");\n";
    if (cm) {
        std::vector<std::string> args;
        for (const kir::BufferArg &b : kernel->buffers) {
            s << "    SurfaceIndex surf_" << b.name << " = cm_emu::bind_buffer(" << b.name << ".data(), " << b.name
              << ".size() * sizeof(" << b.name << "[0]));\n";
            args.push_back("surf_" + b.name);
        }
        for (const kir::BufferArg &b : kernel->buffers) {
            for (const std::string &field : {std::string("0"), std::to_string(lanes), std::string("1")}) args.push_back(field);
        }
        args.push_back("1");
        s << "    const uint groups[3] = {1, 1, 1}, local[3] = {1, 1, 1};\n";
        s << "    cm_emu::launch(groups, local, [&] { " << name << "(";
        for (size_t i = 0; i < args.size(); i++) s << (i ? ", " : "") << args[i];
        s << "); });\n";
        for (const ir::Ure *u : outs) s << "    save(\"" << u->name << ".cm\", " << u->name << ");\n";
    }
    s << "    return 0;\n}\n";
    return s.str();
}

std::vector<uint8_t> read_bytes(const std::filesystem::path &path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

/// A CUDA program for the GPU check (scripts/gpu_scalar_semantics.sh): the
/// batch's kernel, its inputs, the interpreter's outputs, and a main() that
/// runs the kernel and compares bit for bit (NaN equal to NaN).
void write_cuda_bundle(const Batch &batch, const kir::Kernel &kernel, const Buffers &expected, const std::filesystem::path &dir) {
    std::filesystem::create_directories(dir);
    CudaKernelSources sources = print_cuda(kernel);
    std::ofstream(dir / (kernel.name + ".h")) << sources.header;
    std::ofstream(dir / (kernel.name + ".cu")) << sources.kernel;
    auto write = [&](const std::string &file, const Halide::Buffer<> &b) {
        std::ofstream f(dir / file, std::ios::binary);
        std::vector<uint8_t> bytes = bytes_of(b);
        f.write((const char *)bytes.data(), bytes.size());
    };
    std::ostringstream m;
    m << "// Runs " << kernel.name << " on the inputs IN.bin and compares each output with OUT.want\n"
      << "// bit for bit (NaN equal to NaN). Generated by test_scalar_semantics.\n"
      << "#include <cstdio>\n#include <cstring>\n#include <vector>\n#include \"" << kernel.name << ".h\"\n"
      << "static std::vector<char> load(const char *f, size_t n) { std::vector<char> v(n); FILE *h = std::fopen(f, \"rb\"); "
         "size_t got = h ? std::fread(v.data(), 1, n, h) : 0; if (h) std::fclose(h); if (got != n) v.clear(); return v; }\n"
      << "template <typename T> static bool same(T a, T b) { return std::memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b); }\n"
      << "int main() {\n    int failures = 0, compared = 0;\n";
    std::vector<std::string> args;
    for (const kir::BufferArg &b : kernel.buffers) {
        const std::string T = c_type(b.type);
        const std::string file = b.name + (b.is_output ? ".want" : ".bin");
        write(file, b.is_output ? expected.at(b.name) : batch.inputs.at(b.name));
        m << "    std::vector<char> " << b.name << "_host = load(\"" << file << "\", " << lanes << " * sizeof(" << T << "));\n"
          << "    if (" << b.name << "_host.empty()) { std::printf(\"cannot read " << file << "\\n\"); return 2; }\n"
          << "    void *" << b.name << "_device = nullptr;\n"
          << "    cudaMalloc(&" << b.name << "_device, " << b.name << "_host.size());\n";
        if (b.is_output) m << "    cudaMemset(" << b.name << "_device, 0xff, " << b.name << "_host.size());\n";
        else m << "    cudaMemcpy(" << b.name << "_device, " << b.name << "_host.data(), " << b.name << "_host.size(), cudaMemcpyHostToDevice);\n";
        args.push_back("pulse_dense_buffer(" + b.name + "_device, {" + std::to_string(lanes) + "})");
    }
    m << "    cudaError_t status = " << kernel.name << "(";
    for (size_t i = 0; i < args.size(); i++) m << (i ? ", " : "") << args[i];
    m << ", 0);\n    if (status == cudaSuccess) status = cudaDeviceSynchronize();\n"
      << "    if (status != cudaSuccess) { std::printf(\"CUDA error: %s\\n\", cudaGetErrorString(status)); return 2; }\n";
    for (size_t k = 0; k < batch.expressions.size(); k++) {
        const std::string out = "Out" + std::to_string(k);
        const std::string T = c_type(kernel.buffer(out).type);
        std::string text;  // the expression, as a C string literal's contents
        for (char ch : batch.expressions[k]) {
            if (ch == '"' || ch == '\\') text += '\\';
            if (ch == '%') text += '%';
            text += ch;
        }
        m << "    {\n        std::vector<" << T << "> got(" << lanes << "), want(" << lanes << ");\n"
          << "        std::memcpy(want.data(), " << out << "_host.data(), sizeof(" << T << ") * " << lanes << ");\n"
          << "        cudaMemcpy(got.data(), " << out << "_device, sizeof(" << T << ") * " << lanes << ", cudaMemcpyDeviceToHost);\n"
          << "        compared++;\n"
          << "        for (int i = 0; i < " << lanes << "; i++) {\n"
          << "            if (!same(got[i], want[i])) {\n"
          << "                std::printf(\"" << out << "[%d] is %.17g, expected %.17g: " << out << " = " << text
          << "\\n\", i, (double)got[i], (double)want[i]);\n"
          << "                failures++;\n                break;\n            }\n        }\n    }\n";
    }
    m << "    std::printf(\"%s: %d of %d outputs bit for bit\\n\", failures ? \"FAIL\" : \"PASS\", compared - failures, compared);\n"
      << "    return failures ? 1 : 0;\n}\n";
    std::ofstream(dir / "main.cu") << m.str();
}

/// Runs one batch (drawn from `seed`) through every evaluator; returns the number of outputs compared.
int check_batch(const Batch &batch, uint32_t seed, bool with_cm) {
    const std::string name = "scalars";
    INFO("batch seed " << seed << " (PULSE_SCALAR_SEED=" << seed << ")");
    Buffers expected = ir::realize(batch.program, batch.inputs);
    // Evaluators in process.
    sys::SystolicProgram systolic = compile_to_systolic(batch.program);
    Buffers simulated = simulate(systolic, batch.inputs);
    kir::Kernel kernel = lower_to_kernel(systolic, name, batch.input_order);
    optimize_kernel(kernel);
    Buffers executed = batch.inputs;
    for (const auto &[out, buffer] : expected) {
        Halide::Buffer<> b = buffer.copy();
        poison(b);
        executed[out] = b;
    }
    execute_kernel(kernel, executed);
    if (const char *cuda_dir = std::getenv("PULSE_SCALAR_CUDA_DIR")) {
        write_cuda_bundle(batch, kernel, expected, std::filesystem::path(cuda_dir) / ("batch" + std::to_string(seed)));
    }
    // The C++ reference and the CM emulation, compiled.
    const std::filesystem::path dir = temp_dir();
    kir::Kernel cm_kernel;
    if (with_cm) {
        cm_kernel = lower_to_target(systolic, name, batch.input_order, {}, Target::cm_gen9());
        std::ofstream(dir / (name + "_genx.cpp")) << print_cm_kernel(cm_kernel, Target::cm_gen9());
        write_cm_emulation_header(dir.string());
    }
    std::ofstream(dir / (name + "_reference.h")) << emit_reference_cpp(batch.program, name, batch.input_order);
    std::ofstream(dir / "main.cpp") << driver(batch, name, with_cm, &cm_kernel);
    for (const std::string &in : batch.input_order) {
        std::ofstream f(dir / (in + ".bin"), std::ios::binary);
        std::vector<uint8_t> b = bytes_of(batch.inputs.at(in));
        f.write((const char *)b.data(), b.size());
    }
    const std::string command = "cd '" + dir.string() + "' && " +
                                cm_emulation_compile_command((dir / "main.cpp").string(), (dir / "driver").string()) +
                                " && ./driver";
    std::string log;
    INFO(command);
    const int status = run_command(command + " 2>&1", &log);
    INFO(log);
    REQUIRE(status == 0);
    int compared = 0;
    for (size_t k = 0; k < batch.expressions.size(); k++) {
        const std::string out = "Out" + std::to_string(k);
        const Type t = expected.at(out).type();
        const std::vector<uint8_t> want = bytes_of(expected.at(out));
        INFO(out << " (" << type_name(t) << ") = " << batch.expressions[k]);
        CHECK(compare_bits(t, want, bytes_of(simulated.at(out))) == "");
        CHECK(compare_bits(t, want, bytes_of(executed.at(out))) == "");
        CHECK(compare_bits(t, want, read_bytes(dir / (out + ".ref"))) == "");
        if (with_cm) CHECK(compare_bits(t, want, read_bytes(dir / (out + ".cm"))) == "");
        compared++;
    }
    std::filesystem::remove_all(dir);
    return compared;
}

int64_t env_int(const char *name, int64_t fallback) {
    const char *text = std::getenv(name);
    return text ? std::atoll(text) : fallback;
}

}  // namespace

TEST_CASE("every evaluator computes the same bits for random expressions of every type on edge values", "[scalar]") {
    const uint32_t seed = (uint32_t)env_int("PULSE_SCALAR_SEED", 1);
    const int scale = (int)env_int("PULSE_RANDOM_SCALE", 1);
    int compared = 0;
    for (int i = 0; i < 3 * scale; i++) {
        // All types through the interpreter, simulator, executor and C++
        // reference; dword inputs and outputs through the CM emulation too.
        compared += check_batch(draw_batch(seed + 2 * i, 40, all_types, true), seed + 2 * i, false);
        compared += check_batch(draw_batch(seed + 2 * i + 1, 40, dword_types, false), seed + 2 * i + 1, true);
    }
    std::cout << "scalar semantics: " << compared << " random expressions compared bit for bit on 5 evaluators\n";
}

namespace {

/// Edge values of each type as bit patterns (the integers' and floats' extremes,
/// zeros, NaN, infinities, halves, values past every integer range).
std::vector<uint64_t> edge_bits(Type t) {
    std::vector<uint64_t> v;
    if (t.is_float()) {
        const std::vector<double> values = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 127.5, -128.5, 255.9, 65535.5, -32768.9,
                                            2147483647.0, 2147483648.0, -2147483649.0, 4294967296.0, 9.3e18, 1.9e19, -9.3e18, 3.0e38,
                                            -1e300, 1e-40, -7.0, 7.0, 3.0, -3.0, std::numeric_limits<double>::infinity(),
                                            -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
        for (double d : values) {
            if (t.bits() == 32) {
                float f = (float)d;
                uint32_t b;
                std::memcpy(&b, &f, 4);
                v.push_back(b);
            } else {
                uint64_t b;
                std::memcpy(&b, &d, 8);
                v.push_back(b);
            }
        }
        return v;
    }
    const uint64_t mask = t.bits() == 64 ? ~0ull : (1ull << t.bits()) - 1;
    const uint64_t top = 1ull << (t.bits() - 1);
    for (uint64_t b : std::initializer_list<uint64_t>{0ull, 1ull, 2ull, 3ull, 7ull, 100ull, ~0ull, ~1ull, ~6ull, top, top - 1, top + 1, mask - 1, 0x5Aull}) v.push_back(b & mask);
    return v;
}

template<typename T>
T from_bits(uint64_t b) {
    T x;
    if constexpr (sizeof(T) == 8) {
        std::memcpy(&x, &b, 8);
    } else {
        typename std::conditional<sizeof(T) == 4, uint32_t, typename std::conditional<sizeof(T) == 2, uint16_t, uint8_t>::type>::type n =
            (decltype(n))b;
        std::memcpy(&x, &n, sizeof(T));
    }
    return x;
}

template<typename T>
uint64_t to_bits(T x) {
    if constexpr (std::is_floating_point<T>::value) {
        if (x != x) return 0x7FF8DEADull;  // a NaN equals any NaN
    }
    uint64_t b = 0;
    std::memcpy(&b, &x, sizeof(T));
    return b;
}

/// The results, in order, of every scalar-semantics function at `T` on every
/// pair of T's edge values (unary ones on each value): what the OpenCL
/// program below prints for the same type.
template<typename T>
void expected_results(Type t, std::vector<uint64_t> &out) {
    const std::vector<uint64_t> bits = edge_bits(t);
    for (uint64_t ab : bits) {
        const T a = from_bits<T>(ab);
        if constexpr (std::is_floating_point<T>::value) {
            out.push_back(to_bits(pulse_fabs<T>(a)));
            out.push_back(to_bits(pulse_float_to_int<int8_t>(a)));
            out.push_back(to_bits(pulse_float_to_int<int16_t>(a)));
            out.push_back(to_bits(pulse_float_to_int<int32_t>(a)));
            out.push_back(to_bits(pulse_float_to_int<int64_t>(a)));
            out.push_back(to_bits(pulse_float_to_int<uint8_t>(a)));
            out.push_back(to_bits(pulse_float_to_int<uint16_t>(a)));
            out.push_back(to_bits(pulse_float_to_int<uint32_t>(a)));
            out.push_back(to_bits(pulse_float_to_int<uint64_t>(a)));
        } else if constexpr (std::is_signed<T>::value) {
            out.push_back(to_bits(pulse_iabs<typename std::make_unsigned<T>::type, T>(a)));
        }
        for (uint64_t bb : bits) {
            const T b = from_bits<T>(bb);
            if constexpr (std::is_floating_point<T>::value) {
                for (T r : {pulse_fmod<T>(a, b), pulse_fmin<T>(a, b), pulse_fmax<T>(a, b)}) out.push_back(to_bits(r));
            } else {
                for (T r : {pulse_add<T>(a, b), pulse_sub<T>(a, b), pulse_mul<T>(a, b), pulse_div<T>(a, b), pulse_mod<T>(a, b), pulse_min<T>(a, b),
                            pulse_max<T>(a, b), pulse_sat_add<T>(a, b), pulse_sat_sub<T>(a, b)}) {
                    out.push_back(to_bits(r));
                }
            }
        }
    }
}

/// The C program that prints the same results through the OpenCL rendition
/// (runtime/emitted/opencl_helpers.cl, compiled as C with OpenCL's names).
std::string opencl_semantics_program(const std::string &helpers) {
    std::ostringstream s;
    s << "#include <stdbool.h>\n#include <stdio.h>\n#include <string.h>\n#include <math.h>\n";
    s << "typedef unsigned char uchar;\ntypedef unsigned short ushort;\ntypedef unsigned int uint;\ntypedef unsigned long ulong;\n";
    // OpenCL's add_sat and sub_sat, modelled with the compiler's overflow
    // builtins (the exact result clamped to the operands' type).
    s << "#define PULSE_SIGNED(x) ((__typeof__(x))-1 < 0)\n"
         "#define PULSE_MAXOF(x) (PULSE_SIGNED(x) ? (__typeof__(x))((1ull << (sizeof(x) * 8 - 1)) - 1) : (__typeof__(x))~0ull)\n"
         "#define PULSE_MINOF(x) (PULSE_SIGNED(x) ? (__typeof__(x))(-PULSE_MAXOF(x) - 1) : (__typeof__(x))0)\n"
         "#define add_sat(a, b) ({ __typeof__(a) r_; __builtin_add_overflow(a, b, &r_) ? ((b) > 0 ? PULSE_MAXOF(r_) : PULSE_MINOF(r_)) : r_; })\n"
         "#define sub_sat(a, b) ({ __typeof__(a) r_; __builtin_sub_overflow(a, b, &r_) ? ((b) < 0 ? PULSE_MAXOF(r_) : PULSE_MINOF(r_)) : r_; })\n";
    s << "#define cl_khr_fp64 1\n" << helpers << "\n";
    s << "#define BITS(x) ({ __typeof__(x) v_ = (x); unsigned long long b_ = 0; memcpy(&b_, &v_, sizeof v_); b_; })\n";
    s << "#define OUT(x) do { __typeof__(x) r_ = (x); if (r_ != r_) printf(\"7ff8dead\\n\"); else printf(\"%llx\\n\", BITS(r_)); } while (0)\n";
    s << "int main(void) {\n";
    for (Type t : all_types) {
        const std::string T = c_type(t);
        const std::vector<uint64_t> bits = edge_bits(t);
        s << "    {\n        static const unsigned long long bits[] = {";
        for (size_t i = 0; i < bits.size(); i++) s << (i ? ", " : "") << bits[i] << "ull";
        s << "};\n        const int n = " << bits.size() << ";\n";
        s << "        for (int i = 0; i < n; i++) {\n            " << T << " a; memcpy(&a, &bits[i], sizeof a);\n";
        if (t.is_float()) {
            s << "            OUT(pulse_fabs_" << T << "(a));\n";
            for (const char *i : {"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"}) {
                s << "            OUT(pulse_float_to_int_" << i << "_" << T << "(a));\n";
            }
        } else if (t.is_int()) {
            s << "            OUT(pulse_iabs_u" << T << "_" << T << "(a));\n";
        }
        s << "            for (int j = 0; j < n; j++) {\n                " << T << " b; memcpy(&b, &bits[j], sizeof b);\n";
        const std::vector<std::string> ops = t.is_float() ? std::vector<std::string>{"fmod", "fmin", "fmax"}
                                                          : std::vector<std::string>{"add", "sub", "mul", "div", "mod", "min", "max", "sat_add", "sat_sub"};
        for (const std::string &op : ops) s << "                OUT(pulse_" << op << "_" << T << "(a, b));\n";
        s << "            }\n        }\n    }\n";
    }
    s << "    return 0;\n}\n";
    return s.str();
}

}  // namespace

extern const char *const pulse_opencl_helpers_text;  // runtime/emitted/opencl_helpers.cl

TEST_CASE("saturating_add and saturating_sub clamp at the ends of every integer type, on every evaluator and in every printed program", "[scalar]") {
    // Each integer type: its edge values against each other (the clamp
    // both ways, and no clamp), the expected value computed here in 128 bits.
    for (const bool with_cm : {false, true}) {
        Var c("c"), b("b");
        Batch batch;
        std::vector<Func> outs;
        std::vector<std::function<bool(const Halide::Buffer<> &)>> checks;
        std::mt19937 rng(5);
        for (Type ty : with_cm ? dword_types : all_types) {
            if (ty.is_float()) continue;
            const std::string x = "in_" + type_name(ty) + "_a", y = "in_" + type_name(ty) + "_b";
            Input in_x(ty, 1, x), in_y(ty, 1, y);
            Halide::Buffer<> bx(ty, {lanes}, x), by(ty, {lanes}, y);
            with_type(ty, [&](auto tag) {
                using T = decltype(tag);
                std::vector<T> values = edge_values<T>(rng);
                for (int k = 0; k < lanes; k++) {
                    ((T *)bx.raw_buffer()->host)[k] = values[k % values.size()];
                    ((T *)by.raw_buffer()->host)[k] = values[(k * 7 + 3) % values.size()];
                }
                return 0;
            });
            batch.inputs[x] = bx, batch.inputs[y] = by;
            batch.input_order.push_back(x), batch.input_order.push_back(y);
            for (const bool add : {true, false}) {
                Func out(Place::Device, "Out" + std::to_string(outs.size()));
                const Expr e = add ? saturating_add(in_x(b * lanes + c), in_y(b * lanes + c)) : saturating_sub(in_x(b * lanes + c), in_y(b * lanes + c));
                out(b * lanes + c) = e;
                outs.push_back(out);
                batch.expressions.push_back(ir::to_source(e));
                checks.push_back([=](const Halide::Buffer<> &got) {
                    return with_type(ty, [&](auto tag) {
                        using T = decltype(tag);
                        for (int k = 0; k < lanes; k++) {
                            const __int128 u = ((const T *)bx.raw_buffer()->host)[k], v = ((const T *)by.raw_buffer()->host)[k];
                            const __int128 exact = add ? u + v : u - v;
                            const __int128 want = std::clamp<__int128>(exact, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
                            if ((__int128)((const T *)got.raw_buffer()->host)[k] != want) return false;
                        }
                        return true;
                    });
                });
            }
        }
        batch.program = program_of(outs, c, b);
        // The reference's answers are the clamped ones; then every evaluator's bits are the reference's.
        const Buffers expected = ir::realize(batch.program, batch.inputs);
        for (size_t k = 0; k < outs.size(); k++) {
            INFO(batch.expressions[k]);
            CHECK(checks[k](expected.at("Out" + std::to_string(k))));
        }
        CHECK(check_batch(batch, 0, with_cm) == (int)outs.size());
        // The printed programs call the saturating functions (not a lowering of them).
        const std::string reference = emit_reference_cpp(batch.program, "scalars", batch.input_order);
        CHECK(reference.find("pulse_sat_add<") != std::string::npos);
        CHECK(reference.find("pulse_sat_sub<") != std::string::npos);
    }
    // A float is refused when the spec is lowered, naming the fix.
    Input f(Halide::Float(32), 1, "f");
    Var i("i");
    Func V(Halide::Float(32), {i}, Place::Device, "V");
    V(i) = saturating_sub(f(i), f(i));
    V.set_bounds(i, 0, 5);
    CHECK_THROWS_WITH(V.lower(), Catch::Matchers::Contains("saturating arithmetic takes integers") && Catch::Matchers::Contains("write + or -"));
}

TEST_CASE("the OpenCL rendition of the scalar semantics computes the same bits as pulse/ScalarSemantics.h", "[scalar][opencl]") {
    // OpenCL C has no templates, so OpenCL kernels carry their own copy of
    // the semantics, one function per type; compiled here as C (the language
    // it is written in the subset of) and run on every pair of edge values.
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pulse_opencl_semantics_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "semantics.c") << opencl_semantics_program(pulse_opencl_helpers_text);
    std::string log;
    // -fwrapv: OpenCL C's integer conversions keep the low bits, as the GPU's do.
    const bool built = run_command("cc -std=gnu11 -O1 -fwrapv -Wno-unknown-pragmas '" + (dir / "semantics.c").string() + "' -o '" +
                                       (dir / "semantics").string() + "' 2>&1",
                                   &log) == 0;
    INFO(log);
    REQUIRE(built);
    std::string printed;
    REQUIRE(run_command("'" + (dir / "semantics").string() + "'", &printed) == 0);
    std::vector<uint64_t> expected;
    expected_results<int8_t>(Halide::Int(8), expected);
    expected_results<int16_t>(Halide::Int(16), expected);
    expected_results<int32_t>(Halide::Int(32), expected);
    expected_results<int64_t>(Halide::Int(64), expected);
    expected_results<uint8_t>(Halide::UInt(8), expected);
    expected_results<uint16_t>(Halide::UInt(16), expected);
    expected_results<uint32_t>(Halide::UInt(32), expected);
    expected_results<uint64_t>(Halide::UInt(64), expected);
    expected_results<float>(Halide::Float(32), expected);
    expected_results<double>(Halide::Float(64), expected);
    std::istringstream lines(printed);
    std::string line;
    size_t i = 0, mismatches = 0;
    while (std::getline(lines, line)) {
        if (i < expected.size() && std::stoull(line, nullptr, 16) != expected[i]) {
            if (mismatches++ < 5) UNSCOPED_INFO("result " << i << ": OpenCL " << line << ", ScalarSemantics.h " << std::hex << expected[i] << std::dec);
        }
        i++;
    }
    CHECK(i == expected.size());
    CHECK(mismatches == 0);
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
}
