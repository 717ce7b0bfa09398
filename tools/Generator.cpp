// The generator driver: every spec program shares this command line.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "Driver.h"
#include "Generator.h"
#include "ir/UreProgram.h"
#include "exec/InputRegions.h"
#include "exec/Interpreter.h"
#include "ir/Target.h"

namespace pulse {

namespace {

/// A Halide error raised while a spec's C++ ran (its expressions are Halide's),
/// said in the spec's terms, with the fix where the error is a known one.
std::string explain_halide_error(const std::string &spec, std::string what) {
    if (what.rfind("Error: ", 0) == 0) what = what.substr(7);
    while (!what.empty() && what.back() == '\n') what.pop_back();
    if (what.find("select do not have a matching type") != std::string::npos) {
        // Halide lists each branch as "  VALUE has type TYPE".
        std::vector<std::string> types;
        for (size_t at = what.find(" has type "); at != std::string::npos; at = what.find(" has type ", at + 1)) {
            const size_t start = at + 10, end = what.find('\n', start);
            types.push_back(what.substr(start, end == std::string::npos ? std::string::npos : end - start));
        }
        const std::string both = types.size() == 2 ? " (" + types[0] + " and " + types[1] + ")" : "";
        // Halide's name of a type (float32) as the spec writes it (Float(32)).
        auto spelled = [](const std::string &t) {
            for (const char *kind : {"float", "uint", "int"}) {
                const std::string k = kind;
                if (t.rfind(k, 0) == 0 && t.size() > k.size() && std::isdigit((unsigned char)t[k.size()])) {
                    return std::string(1, (char)std::toupper(k[0])) + (k == "uint" ? "Int" : k.substr(1)) + "(" + t.substr(k.size()) + ")";
                }
            }
            return t == "bool" ? std::string("Bool()") : t;
        };
        return "spec " + spec + ": a select of mismatched types" + both + ": cast one branch to the other's type (cast(" +
               (types.size() == 2 ? spelled(types[0]) : std::string("Float(32)")) + ", value)), or write a constant in the branch's type " +
               "(0.0f for float32). Halide: " + what;
    }
    return "spec " + spec + ": Halide refused an expression while the spec was built: " + what;
}


const char *usage_text =
    "usage: %s [-g SPEC] [--param NAME=VALUE]... ACTION...\n"
    "\n"
    "Runs a Pulse spec: uniform recurrence equations plus a space-time transform.\n"
    "\n"
    "options:\n"
    "  -g SPEC             the spec to build, by name, unique suffix (`-g sbm` for conv1d_sbm) or\n"
    "                      unique start of a part of the name (`-g sb`);\n"
    "                      needed when the program registers several (see --list)\n"
    "  --param NAME=VALUE  set an integer parameter of the spec (sizes, e.g. --param C=37); each has a\n"
    "                      default and a range, which --params lists\n"
    "  --params            list the spec's parameters: name, default, range (and the value given)\n"
    "  --seed N            seed of the random inputs, in [0, 4294967295] (default 1)\n"
    "  --list              list the specs this program registers\n"
    "  --version           print Pulse's version\n"
    "  -h, --help          print this help\n"
    "\n"
    "actions:\n"
    "  --realize           run the reference interpreter on random inputs; print each output's\n"
    "                      extents and checksum, and the evaluation rate\n"
    "  --print-ir          print the URE program (loops, UREs, dependences, schedule)\n";

}  // namespace

double checksum(const Halide::Buffer<> &b) {
    double sum = 0;
    b.for_each_element([&](const int *pos) {
        std::vector<int> c(pos, pos + b.dimensions());
        sum += load_element(b, c);
    });
    return sum;
}

namespace {

int run_realize(const std::string &spec_name, const Spec &spec, uint32_t seed) {
    ir::UreProgram program = spec.output.lower();
    Buffers inputs = random_inputs(program, seed);
    auto start = std::chrono::steady_clock::now();
    Buffers outputs = ir::realize(program, inputs, progress_on_stderr(spec_name + ": --realize", "points"));
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << spec_name << ": reference realize on random inputs (seed " << seed << ")\n";
    for (const auto &o : outputs) {
        std::cout << "  " << o.first << ": extents [";
        for (int d = 0; d < o.second.dimensions(); d++) std::cout << (d ? ", " : "") << o.second.dim(d).extent();
        std::cout << "]  checksum " << std::setprecision(10) << checksum(o.second) << "\n";
    }
    int64_t evaluations = program.domain_size() * (int64_t)program.ures.size();
    std::cout << "  " << program.domain_size() << " points x " << program.ures.size() << " UREs in " << std::fixed
              << std::setprecision(4) << seconds << " s (" << std::setprecision(2) << evaluations / seconds / 1e6
              << " M URE evaluations/s)\n";
    return 0;
}

}  // namespace

namespace {

const char *exit_status_text =
    "\n"
    "exit status: 0 on success; 1 for an error in the spec, the transform, an evaluation or\n"
    "writing files; 2 for a bad command line\n";

/// A bad command line: reported like any error, with exit status 2.
class UsageError : public std::runtime_error {
public:
    explicit UsageError(const std::string &message) : std::runtime_error(message) {}
};

template<typename... Args>
[[noreturn]] void usage_error(const Args &...args) {
    throw UsageError(detail::str(args...));
}

bool all_digits(const std::string &text, size_t from) {
    if (text.size() <= from) return false;
    for (size_t i = from; i < text.size(); i++) {
        if (text[i] < '0' || text[i] > '9') return false;
    }
    return true;
}

/// --seed N: a decimal integer in [0, 2^32 - 1], nothing else.
uint32_t parse_seed(const std::string &text) {
    // At most 10 digits fit in uint64 without overflow; more cannot be a uint32.
    if (!all_digits(text, 0) || text.size() > 10 || std::stoull(text) > UINT32_MAX) {
        usage_error("--seed ", text, ": the seed must be an integer in [0, ", UINT32_MAX, "]");
    }
    return (uint32_t)std::stoull(text);
}

/// --param NAME=VALUE: VALUE a decimal integer that fits in int64.
std::pair<std::string, int64_t> parse_param(const std::string &kv) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) usage_error("--param expects NAME=VALUE, not '", kv, "'");
    const std::string text = kv.substr(eq + 1);
    const size_t first_digit = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
    if (!all_digits(text, first_digit)) usage_error("--param ", kv, ": the value must be an integer");
    try {
        return {kv.substr(0, eq), std::stoll(text)};
    } catch (const std::out_of_range &) {
        usage_error("--param ", kv, ": the value does not fit in a 64-bit integer [", INT64_MIN, ", ", INT64_MAX, "]");
    }
}

/// The -o directory of --emit can be created and written: its nearest
/// existing ancestor (or itself) is a directory this process may write in.
/// Checked before any stage runs, so a bad -o fails at once.
void check_output_directory(const std::string &dir) {
    namespace fs = std::filesystem;
    fs::path p = dir.empty() ? fs::path(".") : fs::path(dir);
    while (true) {
        std::error_code ec;
        fs::file_status status = fs::status(p, ec);
        if (fs::exists(status)) {
            if (!fs::is_directory(status)) compile_error("-o ", dir, ": ", p.string(), " is not a directory");
            if (::access(p.c_str(), W_OK | X_OK) != 0) {
                compile_error("-o ", dir, ": cannot write in directory ", p.string(), ": ", std::strerror(errno));
            }
            return;
        }
        if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
            compile_error("-o ", dir, ": cannot access ", p.string(), ": ", ec.message());
        }
        fs::path parent = p.parent_path();
        if (parent == p) return;  // the root
        if (parent.empty()) {
            if (p == ".") return;
            parent = ".";
        }
        p = parent;
    }
}

}  // namespace

int generator_main(int argc, char **argv) {
    const char *program_name = argc > 0 ? argv[0] : "spec";
    std::string spec_name;
    Params params;
    uint32_t seed = 1;
    DriverActions actions;
    bool list_params = false;
    std::vector<std::string> given;  // the --param names, each once
    try {
        try {
            for (int i = 1; i < argc; i++) {
                std::string a = argv[i];
                auto value = [&](const char *flag) -> std::string {
                    if (i + 1 >= argc) usage_error(flag, " needs a value; see --help");
                    return argv[++i];
                };
                if (a == "-h" || a == "--help") {
                    std::printf(usage_text, program_name);
                    std::printf("%s", driver_usage_text());
                    std::printf("%s", exit_status_text);
                    return 0;
                } else if (a == "--version") {
                    std::printf("Pulse %s\n", version());
                    return 0;
                } else if (a == "--list") {
                    for (const std::string &n : registered_specs()) std::cout << n << "  " << spec_description(n) << "\n";
                    return 0;
                } else if (a == "--params") {
                    list_params = true;
                } else if (a == "-g") {
                    spec_name = value("-g");
                } else if (a == "--param") {
                    auto [name, v] = parse_param(value("--param"));
                    if (std::find(given.begin(), given.end(), name) != given.end()) {
                        usage_error("--param ", name, " is given twice; give it once");
                    }
                    given.push_back(name);
                    params.set(name, v);
                } else if (a == "--seed") {
                    seed = parse_seed(value("--seed"));
                } else if (a == "--realize") {
                    actions.realize = true;
                } else if (a == "--print-ir") {
                    actions.print_ir = true;
                } else if (!parse_driver_flag(a, i, argc, argv, actions)) {
                    usage_error("unknown flag '", a, "'; see ", program_name, " --help");
                }
            }
        } catch (const CompileError &e) {
            throw UsageError(e.what());  // a driver flag's value
        }
        if (actions.explore.explore && actions.emit.empty()) {
            if (actions.output_dir.empty()) {
                usage_error("--explore needs -o DIR, the directory to write designs.csv, designs.json and pareto.csv into ",
                            "(e.g. -o explore; -o . for the current directory)");
            }
            check_output_directory(actions.output_dir);
        }
        if (!actions.emit.empty()) {
            if (actions.output_dir.empty()) {
                usage_error("--emit ", actions.emit.front(), " needs -o DIR, the directory to write the generated files into ",
                            "(e.g. -o out; -o . for the current directory)");
            }
            check_output_directory(actions.output_dir);
        }
        if (spec_name.empty()) {
            const std::vector<std::string> names = registered_specs();
            if (names.size() != 1) {
                std::string known;
                for (const std::string &n : names) known += " " + n;
                compile_error("choose a spec with -g SPEC; this program has:", known);
            }
            spec_name = names.front();
        }
        try {
            spec_name = resolve_spec_name(spec_name);
        } catch (const CompileError &e) {
            throw UsageError(e.what());  // -g names no spec, or several
        }
        Spec spec = [&] {
            try {
                return build_spec(spec_name, params);
            } catch (const CompileError &e) {
                if (e.subject.rfind("--param ", 0) == 0) throw UsageError(e.what());  // a value outside its range
                throw;
            } catch (const Halide::CompileError &e) {
                compile_error(explain_halide_error(spec_name, e.what()));
            }
        }();
        for (const std::string &u : params.unused()) {
            usage_error("--param ", u, ": spec ", spec_name, " has no parameter ", u, "; its parameters: ", params.describe());
        }
        if (list_params) {
            std::cout << spec_name << ": parameters (--param NAME=VALUE)\n";
            if (params.declarations().empty()) std::cout << "  none\n";
            for (const Params::Declaration &d : params.declarations()) {
                std::cout << "  " << std::left << std::setw(8) << d.name << " default " << std::setw(6) << d.default_value
                          << " range [" << d.min << ", " << d.max << "]";
                if (int64_t v = params.get(d.name, d.default_value, d.min, d.max); v != d.default_value) std::cout << "  given " << v;
                std::cout << "\n";
            }
        }
        if (!list_params && !actions.any() && !(actions.realize || actions.print_ir)) {
            compile_error("nothing to do: give an action such as --realize; see --help");
        }
        if (actions.print_ir) ir::print(std::cout, spec.output.lower());
        if (actions.realize) run_realize(spec_name, spec, seed);
        return run_driver_actions(spec_name, spec, actions, seed);
    } catch (const UsageError &e) {
        std::cerr << program_name << ": error: " << e.what() << "\n";
        return 2;
    } catch (const CompileError &e) {
        std::cerr << program_name << ": error: " << e.what() << "\n";
        return 1;
    } catch (const EvaluationError &e) {
        std::cerr << program_name << ": evaluation error: " << e.what() << "\n";
        return 1;
    } catch (const InternalError &e) {
        std::cerr << program_name << ": internal error (a bug in Pulse, not in the spec; please report it with the spec): "
                  << e.what() << "\n";
        return 3;
    } catch (const Halide::CompileError &e) {
        std::cerr << program_name << ": error (from Halide): " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        // Writing files (std::filesystem::filesystem_error), memory, and
        // anything else: a message and status 1, never an abort.
        std::cerr << program_name << ": error: " << e.what() << "\n";
        return 1;
    } catch (...) {
        std::cerr << program_name << ": error: an unknown exception\n";
        return 1;
    }
}

}  // namespace pulse
