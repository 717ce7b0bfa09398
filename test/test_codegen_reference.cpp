// The emitted C++ reference (the oracle of generated kernels on machines
// without Halide or isl) equals the interpreter, for every example and for
// outputs written at affine indices.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "codegen/CodeGenReference.h"
#include "TestUtil.h"

using namespace pulse;
using Catch::Matchers::Contains;

namespace {

/// The examples, and a spec of the tests whose outputs are written at affine
/// indices with non-zero minima and negative coefficients (AffineOutputSpec.cpp).
const std::vector<std::string> specs = {"conv1d_sbm", "conv1d_bsm", "conv1d_fsm", "conv1d_bfs",
                                                "conv1d_ffs", "conv1d_fbs", "conv1d_fbs_stride2", "conv2d_sbm",
                                                "conv2d_ssam", "matmul",    "matvec",     "fir_stride2",
                                                "test_affine_outputs", "stencil2d_5pt"};

std::string temp_dir() {
    char pattern[] = "/tmp/pulse_reference_XXXXXX";
    const char *dir = mkdtemp(pattern);
    REQUIRE(dir != nullptr);
    return dir;
}

/// A main() that reads the inputs from files, runs NAME_reference and writes
/// the outputs, and each output's box (min and extent per dimension) to OUTPUT.box.
std::string harness(const ir::UreProgram &p, const std::string &name, const std::vector<std::string> &inputs,
                    int64_t instances) {
    std::ostringstream s;
    s << "#include <cstdio>\n#include \"" << name << "_reference.h\"\n";
    s << "static std::vector<float> load(const char *f) { std::vector<float> v; FILE *h = std::fopen(f, \"rb\"); float x;"
         " while (std::fread(&x, 4, 1, h) == 1) v.push_back(x); std::fclose(h); return v; }\n";
    s << "int main() {\n";
    for (const std::string &in : inputs) s << "    std::vector<float> " << in << " = load(\"" << in << ".bin\");\n";
    for (const ir::Ure &u : p.ures) {
        if (!u.is_output) continue;
        s << "    int64_t " << u.name << "_size = " << name << "_" << u.name << "_elements(" << instances << ");\n";
        s << "    std::vector<float> " << u.name << "(" << u.name << "_size, 0.0f);\n";
        s << "    { FILE *h = std::fopen(\"" << u.name << ".box\", \"w\");\n";
        s << "      for (int d = 0; d < " << u.output_index().size() << "; d++) { int64_t m, e; " << name << "_" << u.name
          << "_region(d, " << instances << ", &m, &e); std::fprintf(h, \"%lld %lld\\n\", (long long)m, (long long)e); }\n";
        s << "      std::fclose(h); }\n";
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

std::string read_text(const std::string &path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("the emitted C++ reference equals the interpreter on every example", "[codegen]") {
    const char *cxx = std::getenv("CXX");
    std::string compiler = cxx && *cxx ? cxx : "c++";
    for (const std::string &spec : specs) {
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
            // The same box as the interpreter's buffer (outputs at affine indices need not start at 0).
            std::string box;
            for (int d = 0; d < out.second.dimensions(); d++) {
                box += std::to_string(out.second.dim(d).min()) + " " + std::to_string(out.second.dim(d).extent()) + "\n";
            }
            CHECK(read_text(dir + "/" + out.first + ".box") == box);
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

TEST_CASE("the layout of an output at affine indices is the box its index spans, instances included", "[codegen]") {
    // test_affine_outputs (C = 6, B = 3): Rev((B - 1 - b) * C + (C - 1 - c) + 3) and
    // Grid(c + 2, b - 1). With b in [0, instances - 1], Rev spans
    // [3 + (B - instances) * C, 3 + B * C - 1] and Grid [2, 7] x [-1, instances - 2].
    const char *cxx = std::getenv("CXX");
    std::string compiler = cxx && *cxx ? cxx : "c++";
    ir::UreProgram p = build_spec("test_affine_outputs").output.lower();
    std::string dir = temp_dir();
    std::ofstream(dir + "/layout_reference.h") << emit_reference_cpp(p, "layout", {"x", "w"});
    std::ofstream(dir + "/main.cpp") << "#include <cstdio>\n#include \"layout_reference.h\"\n"
                                        "int main() {\n"
                                        "    for (int64_t instances : {1, 3, 5})\n"
                                        "        for (int o = 0; o < 2; o++)\n"
                                        "            for (int d = 0; d < 2 - (o == 0); d++) {\n"
                                        "                int64_t m, e;\n"
                                        "                (o == 0 ? layout_Rev_region : layout_Grid_region)(d, instances, &m, &e);\n"
                                        "                std::printf(\"%lld:%d.%d=[%lld,+%lld] \", (long long)instances, o, d, (long long)m, (long long)e);\n"
                                        "            }\n"
                                        "    return 0;\n}\n";
    std::string command = "cd " + dir + " && " + compiler + " -std=c++17 -o layout main.cpp && ./layout > layout.txt";
    INFO(command);
    REQUIRE(std::system(command.c_str()) == 0);
    CHECK(read_text(dir + "/layout.txt") ==
          "1:0.0=[15,+6] 1:1.0=[2,+6] 1:1.1=[-1,+1] "
          "3:0.0=[3,+18] 3:1.0=[2,+6] 3:1.1=[-1,+3] "
          "5:0.0=[-9,+30] 5:1.0=[2,+6] 5:1.1=[-1,+5] ");
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("the layout of an output written on the interior of overlapped tiles is that interior", "[codegen]") {
    // jacobi2d (T = 3, PE = 16, TH = 12, BX = 2, BY = 2): a tile writes its cells 3 from each
    // side, Out(bx * 10 + x - 3, by * 6 + y - 3) for x in [3, 13), y in [3, 9): Out spans
    // [0, 20) x [0, 6 * instances), as the interpreter's buffer does.
    const char *cxx = std::getenv("CXX");
    std::string compiler = cxx && *cxx ? cxx : "c++";
    ir::UreProgram p = build_spec("jacobi2d", test::params({{"T", 3}, {"PE", 16}, {"TH", 12}})).output.lower();
    Buffers out = ir::realize(p, random_inputs(p, 3));
    CHECK(out.at("Out").dim(0).min() == 0);
    CHECK(out.at("Out").dim(0).extent() == 20);
    CHECK(out.at("Out").dim(1).min() == 0);
    CHECK(out.at("Out").dim(1).extent() == 12);
    std::string dir = temp_dir();
    std::ofstream(dir + "/tiles_reference.h") << emit_reference_cpp(p, "tiles", {"u", "n"});
    std::ofstream(dir + "/main.cpp") << "#include <cstdio>\n#include \"tiles_reference.h\"\n"
                                        "int main() {\n"
                                        "    for (int64_t instances : {1, 2, 5})\n"
                                        "        for (int d = 0; d < 2; d++) {\n"
                                        "            int64_t m, e;\n"
                                        "            tiles_Out_region(d, instances, &m, &e);\n"
                                        "            std::printf(\"%lld:%d=[%lld,+%lld] \", (long long)instances, d, (long long)m, (long long)e);\n"
                                        "        }\n"
                                        "    return 0;\n}\n";
    std::string command = "cd " + dir + " && " + compiler + " -std=c++17 -o tiles main.cpp && ./tiles > tiles.txt";
    INFO(command);
    REQUIRE(std::system(command.c_str()) == 0);
    CHECK(read_text(dir + "/tiles.txt") == "1:0=[0,+20] 1:1=[0,+6] 2:0=[0,+20] 2:1=[0,+12] 5:0=[0,+20] 5:1=[0,+30] ");
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("the layout functions are C, named by buffer, and describe_buffers states the sizes", "[codegen]") {
    // conv1d_sbm (C = 16, Q = 5, B = 4): x spans [0, 16 * instances + 3], w [0, 4],
    // Out [0, 16 * instances - 1].
    ir::UreProgram p = build_spec("conv1d_sbm").output.lower();
    std::string text = describe_buffers(p, "conv1d_sbm", {"x", "w"});
    CHECK_THAT(text, Contains("What it computes: Out from x, w by the UREs below, one array instance per value of loop 'b'"));
    CHECK_THAT(text, Contains("(4 instances)"));
    CHECK_THAT(text, Contains("  x: input, float, 68 elements, indices [0, 67]\n"));
    CHECK_THAT(text, Contains("  w: input, float, 5 elements, indices [0, 4]\n"));
    CHECK_THAT(text, Contains("  Out: output, float, 64 elements, indices [0, 63]\n"));
    std::string dir = temp_dir();
    std::ofstream(dir + "/main.c") << "#include <stdint.h>\n#include <stdio.h>\n"
                                   << emit_layout_functions(p, "conv1d_sbm", {"x", "w"}, "static inline")
                                   << "int main(void) {\n"
                                      "    int64_t m, e;\n"
                                      "    conv1d_sbm_x_region(0, 7, &m, &e);\n"
                                      "    printf(\"%lld %lld %lld %lld %lld %lld\", (long long)m, (long long)e,\n"
                                      "           (long long)conv1d_sbm_x_elements(7), (long long)conv1d_sbm_w_elements(7),\n"
                                      "           (long long)conv1d_sbm_Out_elements(7), (long long)conv1d_sbm_default_instances());\n"
                                      "    return 0;\n}\n";
    std::string command = "cd " + dir + " && cc -std=c99 -Wall -Werror -o layout main.c && ./layout > layout.txt";
    INFO(command);
    REQUIRE(std::system(command.c_str()) == 0);
    CHECK(read_text(dir + "/layout.txt") == "0 116 116 5 112 4");
    std::system(("rm -rf " + dir).c_str());
}
