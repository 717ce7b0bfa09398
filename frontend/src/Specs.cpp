// The spec registry, spec parameters and random inputs that pulse/pulse.h
// declares: what a spec program and a test need to build and run specs,
// apart from the generator's command line (tools/Generator.cpp).
#include <algorithm>
#include <map>

#include "exec/InputRegions.h"
#include "pulse/pulse.h"

namespace pulse {

namespace {

struct SpecEntry {
    std::string description;
    SpecBuilder builder;
};

std::map<std::string, SpecEntry> &spec_registry() {
    static std::map<std::string, SpecEntry> registry;
    return registry;
}

}  // namespace

int64_t Params::get(const std::string &name, int64_t default_value, int64_t min, int64_t max) const {
    auto known = std::find_if(declared.begin(), declared.end(), [&](const Declaration &d) { return d.name == name; });
    if (known == declared.end()) {
        if (min > max || default_value < min || default_value > max) {
            compile_error("parameter ", name, ": the spec's default ", default_value, " lies outside its range [", min, ", ",
                          max, "]; fix the spec's get call");
        }
        declared.push_back(Declaration{name, default_value, min, max});
    }
    auto it = values.find(name);
    if (it == values.end()) return default_value;
    if (it->second < min || it->second > max) {
        // A bad command line, not a bad spec: the subject says which flag.
        throw CompileError(detail::str("--param ", name, "=", it->second, ": out of range; ", name, " must be in [", min, ", ", max,
                                       "] (default ", default_value, ")"),
                           Refusal::Misuse, "--param " + name);
    }
    return it->second;
}

int Params::get_int(const std::string &name, int default_value, int min, int max) const {
    return (int)get(name, default_value, min, max);
}

std::vector<std::string> Params::unused() const {
    std::vector<std::string> names;
    for (const auto &v : values) {
        auto read = std::find_if(declared.begin(), declared.end(), [&](const Declaration &d) { return d.name == v.first; });
        if (read == declared.end()) names.push_back(v.first);
    }
    return names;
}

std::string Params::describe() const {
    std::string text;
    for (const Declaration &d : declared) {
        text += detail::str(text.empty() ? "" : ", ", d.name, " = ", d.default_value, " in [", d.min, ", ", d.max, "]");
    }
    return text.empty() ? "none" : text;
}

bool register_spec(const std::string &name, const std::string &description, SpecBuilder builder) {
    if (spec_registry().count(name)) throw CompileError("two specs are registered as " + name);
    spec_registry()[name] = SpecEntry{description, std::move(builder)};
    return true;
}

std::vector<std::string> registered_specs() {
    std::vector<std::string> names;
    for (const auto &e : spec_registry()) names.push_back(e.first);
    return names;
}

std::string resolve_spec_name(const std::string &name) {
    if (spec_registry().count(name)) return name;
    auto names_where = [](auto &&matches) {
        std::vector<std::string> found;
        for (const auto &e : spec_registry()) {
            if (matches(e.first)) found.push_back(e.first);
        }
        return found;
    };
    std::vector<std::string> matches = names_where([&](const std::string &n) {
        return n.size() > name.size() && n.compare(n.size() - name.size(), name.size(), name) == 0 &&
               n[n.size() - name.size() - 1] == '_';
    });
    if (matches.empty() && !name.empty()) {
        matches = names_where([&](const std::string &n) {
            for (size_t at = 0; at != std::string::npos; at = n.find('_', at + 1)) {
                const size_t part = at == 0 && n[0] != '_' ? 0 : at + 1;
                if (n.compare(part, name.size(), name) == 0) return true;
            }
            return false;
        });
    }
    if (matches.size() == 1) return matches[0];
    auto list = [](const std::vector<std::string> &names) {
        std::string text;
        for (const std::string &n : names) text += " " + n;
        return text;
    };
    if (matches.size() > 1) {
        compile_error("-g ", name, " is ambiguous: it matches", list(matches), "; give more of the name");
    }
    compile_error("no spec named '", name, "'; this program has:", list(registered_specs()));
}

Spec build_spec(const std::string &name, const Params &params) {
    return spec_registry().at(resolve_spec_name(name)).builder(params);
}

std::string spec_description(const std::string &name) { return spec_registry().at(resolve_spec_name(name)).description; }

Buffers random_inputs(const ir::UreProgram &program, uint32_t seed) { return random_input_buffers(program, seed); }

Buffers random_inputs(const Spec &spec, uint32_t seed) { return random_input_buffers(spec.output.lower(), seed); }

}  // namespace pulse
