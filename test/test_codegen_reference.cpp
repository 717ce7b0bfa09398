// The emitted C++ reference (the oracle of generated kernels on machines
// without Halide or isl) equals the interpreter, for every example.
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "CodeGenReference.h"
#include "TestUtil.h"

using namespace pulse;

namespace {

const std::vector<std::string> example_specs = {"conv1d_sbm", "conv1d_bsm", "conv1d_fsm", "conv1d_bfs",
                                                "conv1d_ffs", "conv1d_fbs", "conv1d_fbs_stride2", "conv2d_sbm",
                                                "matmul",     "matvec",     "fir_stride2"};

std::string temp_dir() {
    char pattern[] = "/tmp/pulse_reference_XXXXXX";
    const char *dir = mkdtemp(pattern);
    REQUIRE(dir != nullptr);
    return dir;
}

/// A main() that reads the inputs from files, runs NAME_reference and writes the outputs.
std::string harness(const ir::UreProgram &p, const std::string &name, const std::vector<std::string> &inputs,
                    int64_t instances) {
    std::ostringstream s;
    s << "#include <cstdio>\n#include \"" << name << "_reference.h\"\n";
    s << "static std::vector<float> load(const char *f) { std::vector<float> v; FILE *h = std::fopen(f, \"rb\"); float x;"
         " while (std::fread(&x, 4, 1, h) == 1) v.push_back(x); std::fclose(h); return v; }\n";
    s << "int main() {\n";
    for (const std::string &in : inputs) s << "    std::vector<float> " << in << " = load(\"" << in << ".bin\");\n";
    int o = 0;
    for (const ir::Ure &u : p.ures) {
        if (!u.is_output) continue;
        s << "    int64_t " << u.name << "_size = 1;\n";
        for (size_t d = 0; d < u.args.size(); d++) {
            s << "    " << u.name << "_size *= " << name << "_output_extent(" << o << ", " << d << ", " << instances << ");\n";
        }
        s << "    std::vector<float> " << u.name << "(" << u.name << "_size, 0.0f);\n";
        o++;
    }
    s << "    " << name << "_reference(";
    for (const std::string &in : inputs) s << in << ".data(), ";
    for (const ir::Ure &u : p.ures) {
        if (u.is_output) s << u.name << ".data(), ";
    }
    s << instances << ");\n";
    for (const ir::Ure &u : p.ures) {
        if (!u.is_output) continue;
        s << "    { FILE *h = std::fopen(\"" << u.name << ".out\", \"wb\"); std::fwrite(" << u.name << ".data(), 4, " << u.name
          << ".size(), h); std::fclose(h); }\n";
    }
    s << "    return 0;\n}\n";
    return s.str();
}

void write_dense(const Halide::Buffer<> &b, const std::string &path) {
    std::ofstream f(path, std::ios::binary);
    b.for_each_element([&](const int *pos) {
        float v = (float)load_element(b, std::vector<int>(pos, pos + b.dimensions()));
        f.write(reinterpret_cast<const char *>(&v), 4);
    });
}

std::vector<float> read_floats(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::vector<float> v;
    float x;
    while (f.read(reinterpret_cast<char *>(&x), 4)) v.push_back(x);
    return v;
}

}  // namespace

TEST_CASE("the emitted C++ reference equals the interpreter on every example", "[codegen]") {
    const char *cxx = std::getenv("CXX");
    std::string compiler = cxx && *cxx ? cxx : "c++";
    for (const std::string &spec : example_specs) {
        ir::UreProgram p = build_spec(spec).output.lower();
        std::vector<std::string> inputs;
        for (const Input &in : build_spec(spec).inputs) inputs.push_back(in.name());
        const int runtime_loop = instances_loop(p);
        REQUIRE(runtime_loop >= 0);
        const int64_t instances = p.loops[runtime_loop].extent;
        std::string dir = temp_dir();
        {
            std::ofstream(dir + "/" + spec + "_reference.h") << emit_reference_cpp(p, spec, inputs);
            std::ofstream(dir + "/main.cpp") << harness(p, spec, inputs, instances);
        }
        Buffers in = random_inputs(p, 42);
        // Halide's for_each_element visits the first dimension fastest: the dense layout.
        for (const std::string &name : inputs) write_dense(in.at(name), dir + "/" + name + ".bin");
        std::string command = "cd " + dir + " && " + compiler + " -std=c++17 -O1 -o harness main.cpp && ./harness";
        INFO(spec << ": " << command);
        REQUIRE(std::system(command.c_str()) == 0);
        Buffers expected = ir::realize(p, in);
        for (const auto &out : expected) {
            std::vector<float> got = read_floats(dir + "/" + out.first + ".out");
            std::vector<float> want;
            out.second.for_each_element([&](const int *pos) {
                want.push_back((float)load_element(out.second, std::vector<int>(pos, pos + out.second.dimensions())));
            });
            REQUIRE(got.size() == want.size());
            for (size_t i = 0; i < want.size(); i++) {
                INFO(spec << " output " << out.first << " element " << i);
                REQUIRE(test::close(got[i], want[i]));
            }
        }
        std::system(("rm -rf " + dir).c_str());
    }
}
