#include "exec/InputRegions.h"

#include <climits>
#include <cstring>
#include <iomanip>
#include <optional>
#include <random>
#include <sstream>
#include <type_traits>

#include "ir/Affine.h"

namespace pulse {

std::map<std::string, std::vector<IndexRange>> infer_input_regions(const ir::UreProgram &p) {
    std::map<std::string, std::vector<IndexRange>> regions;
    for (const ir::InputDecl &in : p.inputs) {
        regions[in.name].assign(in.dimensions, IndexRange{INT64_MAX, INT64_MIN});
        for (size_t d = 0; d < in.table_extents.size(); d++) regions[in.name][d] = IndexRange{0, in.table_extents[d] - 1};
    }
    for (const ir::InputAccess &a : p.input_accesses) {
        std::vector<IndexRange> &r = regions[a.input];
        for (size_t d = 0; d < a.index.size(); d++) {
            auto form = to_affine(a.index[d], p.loops);
            if (!form) compile_error("input ", a.input, " is read at a non-affine index ", ir::to_source(a.index[d]));
            auto range = form->range(a.reach(p.loops));
            r[d].min = std::min(r[d].min, range.first);
            r[d].max = std::max(r[d].max, range.second);
        }
    }
    return regions;
}

namespace {
template<typename T>
T *element_address(const Halide::Buffer<> &b, const std::vector<int> &coords) {
    const halide_buffer_t *raw = b.raw_buffer();
    int64_t offset = 0;
    for (int d = 0; d < raw->dimensions; d++) offset += (int64_t)(coords[d] - raw->dim[d].min) * raw->dim[d].stride;
    return reinterpret_cast<T *>(raw->host) + offset;
}

template<typename F>
auto dispatch(Halide::Type t, F f) {
    if (t == Halide::Float(32)) return f(float());
    if (t == Halide::Float(64)) return f(double());
    if (t == Halide::Int(32)) return f(int32_t());
    if (t == Halide::Int(16)) return f(int16_t());
    if (t == Halide::Int(8)) return f(int8_t());
    if (t == Halide::Int(64)) return f(int64_t());
    if (t == Halide::UInt(8)) return f(uint8_t());
    if (t == Halide::UInt(16)) return f(uint16_t());
    if (t == Halide::UInt(32)) return f(uint32_t());
    if (t == Halide::UInt(64)) return f(uint64_t());
    if (t == Halide::Bool()) return f(bool());
    std::ostringstream s;
    s << t;
    compile_error("element type ", s.str(), " is not supported for buffers");
}
}  // namespace

const uint8_t *element_bytes(const Halide::Buffer<> &b, const std::vector<int> &coords) {
    return dispatch(b.type(), [&](auto tag) { return (const uint8_t *)element_address<decltype(tag)>(b, coords); });
}

namespace {
uint8_t poison_byte(const Halide::Type &t) { return t.is_float() ? 0xff : 0x5A; }
}  // namespace

void poison(Halide::Buffer<> &buffer) {
    std::memset(buffer.raw_buffer()->host, poison_byte(buffer.type()), buffer.size_in_bytes());
}

bool is_poison_element(const Halide::Buffer<> &b, const std::vector<int> &coords) {
    const uint8_t *bytes = element_bytes(b, coords);
    for (int i = 0; i < b.type().bytes(); i++) {
        if (bytes[i] != poison_byte(b.type())) return false;
    }
    return true;
}

Scalar load_element(const Halide::Buffer<> &b, const std::vector<int> &coords) {
    return dispatch(b.type(), [&](auto tag) {
        using T = decltype(tag);
        // A bool's byte is read as a byte: any other than 0 is true (a buffer
        // poisoned with another byte, or written by other code, is no bool).
        if constexpr (std::is_same_v<T, bool>) {
            return Scalar::of_bool(*element_address<uint8_t>(b, coords) != 0);
        } else {
            const T v = *element_address<T>(b, coords);
            if constexpr (std::is_same_v<T, float>) return Scalar::of_float(v);
            else if constexpr (std::is_same_v<T, double>) return Scalar::of_double(v);
            else if constexpr (std::is_signed_v<T>) return Scalar::of_int(v);
            else return Scalar::of_uint(v);
        }
    });
}

void store_element(Halide::Buffer<> &b, const std::vector<int> &coords, Scalar value) {
    const Scalar v = Scalar::normalize(value, b.type());
    dispatch(b.type(), [&](auto tag) {
        using T = decltype(tag);
        T &element = *element_address<T>(b, coords);
        if constexpr (std::is_same_v<T, bool>) element = v.is_true();
        else if constexpr (std::is_same_v<T, float>) element = v.as_float();
        else if constexpr (std::is_same_v<T, double>) element = v.as_double();
        else if constexpr (std::is_signed_v<T>) element = (T)v.as_int();
        else element = (T)v.as_uint();
        return 0;
    });
}

void check_enumerable(const ir::UreProgram &p, const std::string &action) {
    // Sizes as long double: a product of 64-bit extents may not fit 64 bits.
    long double points = 1;
    for (const ir::Loop &l : p.loops) points *= (long double)std::max<int64_t>(l.extent, 0);
    auto refuse = [&](const std::string &what) {
        evaluation_error(p.name, ": ", action, " would ", what, "; the CPU tools enumerate at most ", max_enumerated_points,
                         " points and ", max_enumerated_bytes >> 30, " GiB of buffers: run them at smaller sizes (--param), ",
                         "or use --check, --report and --emit, which do not enumerate the domain");
    };
    if (points > (long double)max_enumerated_points) {
        std::ostringstream n;
        n << std::setprecision(4) << (double)points;
        refuse("enumerate " + n.str() + " points of the loop nest");
    }
    long double bytes = 0;
    auto add_buffer = [&](const std::string &name, Halide::Type type, const std::vector<int64_t> &extents) {
        long double elements = 1;
        for (int64_t e : extents) {
            if (e > INT32_MAX) refuse("allocate " + name + " with an extent of " + std::to_string(e) + " (past 2^31 - 1)");
            elements *= (long double)std::max<int64_t>(e, 1);
        }
        bytes += elements * type.bytes();
    };
    auto regions = infer_input_regions(p);
    for (const ir::InputDecl &in : p.inputs) {
        std::vector<int64_t> extents;
        for (const IndexRange &r : regions[in.name]) extents.push_back(r.extent());
        add_buffer(in.name, in.type, extents);
    }
    for (const ir::Ure *u : p.outputs()) {
        std::vector<int64_t> extents;
        const std::vector<ir::Loop> loops = p.output_loops(*u);
        for (const Halide::Expr &e : u->output_index()) {
            std::optional<AffineForm> f = to_affine(e, p.loops);
            int64_t lo = f ? f->constant : 0, hi = lo;
            if (f) {
                for (size_t i = 0; i < loops.size(); i++) {
                    int64_t a = f->coefficient[i] * loops[i].min, b = f->coefficient[i] * loops[i].max();
                    lo += std::min(a, b), hi += std::max(a, b);
                }
            }
            extents.push_back(hi - lo + 1);
        }
        add_buffer(u->name, u->type, extents);
    }
    if (bytes > (long double)max_enumerated_bytes) {
        std::ostringstream n;
        n << std::setprecision(4) << (double)(bytes / (1 << 30));
        refuse("allocate " + n.str() + " GiB of input and output buffers");
    }
}

Buffers random_input_buffers(const ir::UreProgram &p, uint32_t seed) {
    check_enumerable(p, "running on random inputs (--realize, --simulate, --execute-kernel)");
    std::mt19937 rng(seed);
    Buffers buffers;
    auto regions = infer_input_regions(p);
    for (const ir::InputDecl &in : p.inputs) {
        const std::vector<IndexRange> &r = regions[in.name];
        std::vector<int> sizes;
        for (const IndexRange &x : r) sizes.push_back((int)std::max<int64_t>(x.extent(), 1));
        Halide::Buffer<> b(in.type, sizes, in.name);
        for (size_t d = 0; d < r.size(); d++) b.raw_buffer()->dim[d].min = (int)r[d].min;
        std::uniform_real_distribution<double> real(0.1, 1.0);
        std::uniform_int_distribution<int> integer(1, 9);
        b.for_each_element([&](const int *pos) {
            std::vector<int> coords(pos, pos + r.size());
            double sign = (rng() & 1) ? 1.0 : -1.0;
            double v = in.type.is_float() ? sign * real(rng) : (in.type.is_uint() ? integer(rng) : sign * integer(rng));
            store_element(b, coords, v);
        });
        buffers[in.name] = b;
    }
    return buffers;
}

}  // namespace pulse
