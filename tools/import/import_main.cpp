// pulse-import FILE.c --function NAME [-o SPEC.cpp]: a C loop nest to a Pulse
// spec (docs/import.md). Parses with Clang (libTooling), reports errors in
// Clang's style, and links neither Halide nor the compiler.
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Frontend/ASTUnit.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/raw_ostream.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "Frontend.h"
#include "Model.h"

using namespace pulse_import;

namespace {

const char *usage =
    "usage: pulse-import FILE.c --function NAME [-o SPEC.cpp] [options]\n"
    "\n"
    "Reads the C function NAME (a chain of for loops with affine bounds over its int\n"
    "parameters, affine array accesses, assignments, reductions and min/max recurrences)\n"
    "and writes a Pulse spec of uniform recurrence equations with a validated default\n"
    "space-time transform (docs/import.md).\n"
    "\n"
    "options:\n"
    "  -o SPEC.cpp           write the spec there (default: standard output)\n"
    "  --name SPEC           the spec's registered name (default: NAME)\n"
    "  --param P=VALUE       default value of the int parameter P in the spec (default 8)\n"
    "  --emit-check FILE     also write a check that runs the C function and the spec on the\n"
    "                        same random inputs and compares every output element\n"
    "  --version             print the version\n"
    "  -- ARGS...            extra arguments for the C parser (-I, -D, -std=...)\n";

/// Clang's DiagnosticsEngine over the parsed file: `file:line:col: error: ...`
/// with the source line and a caret.
class ClangDiagnostics : public Diagnostics {
public:
    explicit ClangDiagnostics(clang::ASTUnit &ast)
        : opts(new clang::DiagnosticOptions()), printer(llvm::errs(), opts.get()),
          engine(new clang::DiagnosticIDs(), opts, &printer, false) {
        engine.setSourceManager(&ast.getSourceManager());
        printer.BeginSourceFile(ast.getLangOpts(), nullptr);
    }
    ~ClangDiagnostics() override { printer.EndSourceFile(); }
    void error(clang::SourceRange where, const std::string &message) override {
        report(clang::DiagnosticsEngine::Error, where, message);
    }
    void note(clang::SourceRange where, const std::string &message) override {
        report(clang::DiagnosticsEngine::Note, where, message);
    }
    void warning(clang::SourceRange where, const std::string &message) override {
        report(clang::DiagnosticsEngine::Warning, where, message);
    }

private:
    llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> opts;
    clang::TextDiagnosticPrinter printer;
    clang::DiagnosticsEngine engine;
    void report(clang::DiagnosticsEngine::Level level, clang::SourceRange where, const std::string &message) {
        auto builder = engine.Report(where.getBegin(), engine.getCustomDiagID(level, "%0"));
        builder << message;
        if (where.isValid()) builder << clang::CharSourceRange::getTokenRange(where);
    }
};

int fail(const std::string &message, int status = 2) {
    std::cerr << "pulse-import: error: " << message << "\n";
    return status;
}

bool write_file(const std::string &path, const std::string &text) {
    std::ofstream out(path);
    out << text;
    return (bool)out;
}

}  // namespace

int main(int argc, char **argv) {
    std::string file, function, output, check;
    ImportOptions options;
    std::vector<std::string> clang_args = {"-xc", "-std=c11", "-fsyntax-only", "-resource-dir=" PULSE_CLANG_RESOURCE_DIR};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
            return argv[++i];
        };
        try {
            if (a == "-h" || a == "--help") {
                std::cout << usage;
                return 0;
            } else if (a == "--version") {
                std::cout << "pulse-import (Pulse " PULSE_VERSION ")\n";
                return 0;
            } else if (a == "--function") function = value();
            else if (a == "-o") output = value();
            else if (a == "--name") options.spec_name = value();
            else if (a == "--emit-check") check = value();
            else if (a == "--param") {
                std::string kv = value();
                size_t eq = kv.find('=');
                if (eq == std::string::npos || eq == 0) return fail("--param expects P=VALUE, not '" + kv + "'");
                try {
                    size_t used = 0;
                    options.defaults[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1), &used);
                    if (used != kv.size() - eq - 1) throw std::invalid_argument(kv);
                } catch (const std::exception &) {
                    return fail("--param " + kv + ": the value must be an integer");
                }
            } else if (a == "--") {
                clang_args.insert(clang_args.end(), argv + i + 1, argv + argc);
                break;
            } else if (!a.empty() && a[0] == '-') return fail("unknown option '" + a + "'; see --help");
            else if (file.empty()) file = a;
            else return fail("a second input file '" + a + "'; pulse-import reads one");
        } catch (const std::runtime_error &e) {
            return fail(e.what());
        }
    }
    if (file.empty() || function.empty()) return fail("give a C file and --function NAME; see --help");
    std::ifstream in(file);
    if (!in) return fail("cannot read " + file, 1);
    std::stringstream code;
    code << in.rdbuf();

    llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> parse_opts(new clang::DiagnosticOptions());
    clang::TextDiagnosticPrinter parse_printer(llvm::errs(), parse_opts.get());
    std::unique_ptr<clang::ASTUnit> ast = clang::tooling::buildASTFromCodeWithArgs(
        code.str(), clang_args, file, "pulse-import", std::make_shared<clang::PCHContainerOperations>(),
        clang::tooling::getClangStripDependencyFileAdjuster(), clang::tooling::FileContentMappings(), &parse_printer);
    if (!ast || ast->getDiagnostics().hasErrorOccurred()) {
        std::cerr << "pulse-import: " << file << " does not compile as C\n";
        return 1;
    }
    const clang::FunctionDecl *fn = nullptr;
    for (const clang::Decl *d : ast->getASTContext().getTranslationUnitDecl()->decls()) {
        if (const auto *f = llvm::dyn_cast<clang::FunctionDecl>(d); f && f->getNameAsString() == function && f->hasBody()) {
            fn = f->getDefinition();
        }
    }
    if (!fn) return fail(file + " defines no function '" + function + "'", 1);

    ClangDiagnostics diag(*ast);
    Program prog;
    prog.file = file;
    std::string spec, check_text;
    try {
        build_program(ast->getASTContext(), fn, diag, prog);
        spec = write_spec(prog, options, diag, check.empty() ? nullptr : &check_text);
    } catch (const Rejected &) {
        return 1;
    } catch (const std::exception &e) {
        // isl reports its failures as exceptions; they are internal errors, not crashes.
        return fail(std::string("internal error: ") + e.what(), 1);
    }
    if (output.empty()) std::cout << spec;
    else if (!write_file(output, spec)) return fail("cannot write " + output, 1);
    if (!check.empty() && !write_file(check, check_text)) return fail("cannot write " + check, 1);
    return 0;
}
