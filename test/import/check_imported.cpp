// check_imported SPEC [SEED]: runs the check pulse-import --emit-check wrote for
// SPEC: the original C function and the imported spec on the same random inputs
// (those --realize uses), every output element compared. Prints PASS or FAIL.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace {
std::map<std::string, int (*)(unsigned)> &checks() {
    static std::map<std::string, int (*)(unsigned)> registry;
    return registry;
}
}  // namespace

bool pulse_import_register_check(const char *spec, int (*check)(unsigned seed)) {
    checks()[spec] = check;
    return true;
}

int main(int argc, char **argv) {
    if (argc < 2 || !checks().count(argv[1])) {
        std::fprintf(stderr, "usage: check_imported SPEC [SEED]; specs:");
        for (const auto &c : checks()) std::fprintf(stderr, " %s", c.first.c_str());
        std::fprintf(stderr, "\n");
        return 2;
    }
    const unsigned seed = argc > 2 ? (unsigned)std::strtoul(argv[2], nullptr, 10) : 1;
    try {
        const int failed = checks()[argv[1]](seed);
        std::printf("%s %s (seed %u)\n", failed ? "FAIL" : "PASS", argv[1], seed);
        return failed ? 1 : 0;
    } catch (const std::exception &e) {
        std::printf("FAIL %s: %s\n", argv[1], e.what());
        return 1;
    }
}
