#include "Explore.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numeric>
#include <sstream>
#include <tuple>

#include "analysis/CheckWellDefined.h"
#include "analysis/FindPropagations.h"
#include "lower/LowerToKernel.h"
#include "lower/LowerToSystolic.h"
#include "lower/PropagationRewrites.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

std::string tuple_text(const std::vector<int64_t> &v) {
    std::string s = "(";
    for (size_t i = 0; i < v.size(); i++) s += (i ? "," : "") + std::to_string(v[i]);
    return s + ")";
}

int64_t gcd_of(const std::vector<int64_t> &v) {
    int64_t g = 0;
    for (int64_t x : v) g = std::gcd(g, x < 0 ? -x : x);
    return g;
}

/// Every nonzero integer vector of `n` entries in [lo, hi], in lexicographic order.
std::vector<std::vector<int64_t>> vectors_in(size_t n, int64_t lo, int64_t hi) {
    std::vector<std::vector<int64_t>> out;
    std::vector<int64_t> v(n, lo);
    while (true) {
        if (gcd_of(v) != 0) out.push_back(v);
        size_t i = n;
        while (i > 0 && v[i - 1] == hi) v[--i] = lo;
        if (i == 0) break;
        v[i - 1]++;
    }
    return out;
}

/// A row is written first nonzero entry positive: negating a space row mirrors the array.
bool leads_positive(const std::vector<int64_t> &row) {
    for (int64_t x : row) {
        if (x) return x > 0;
    }
    return false;
}

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

/// `relative` (a path in the source tree: "scripts/explore_plot.py") where
/// an installed program finds it, <prefix>/share/pulse/..., if it is there;
/// else as given (a program of the build tree, run from the source tree).
std::string installed_file(const std::string &relative) {
    std::error_code error;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) return relative;
    const std::filesystem::path installed = exe.parent_path().parent_path() / "share" / "pulse" / relative;
    return std::filesystem::exists(installed, error) ? installed.lexically_normal().string() : relative;
}

/// A distance over the nest's loops as one over `src` (the transform's source loops).
std::vector<int64_t> on_source(const ir::UreProgram &p, const std::vector<std::string> &src, const std::vector<int64_t> &loop_d) {
    std::vector<int64_t> d;
    for (const std::string &v : src) d.push_back(loop_d[p.loop_index(v)]);
    return d;
}

std::string csv_quote(const std::string &s) {
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string json_quote(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') out += "\\n";
        else out += c;
    }
    return out + "\"";
}

std::string number(double v) {
    std::ostringstream out;
    out << std::setprecision(6) << v;
    return out.str();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// "MIN:MAX" of --range.
std::pair<int64_t, int64_t> parse_range(const std::string &v) {
    size_t colon = v.find(':', 1);
    char *end = nullptr;
    if (colon != std::string::npos) {
        // Named strings: strtoll's end pointer points into them.
        const std::string low_text = v.substr(0, colon), high_text = v.substr(colon + 1);
        errno = 0;
        long long lo = std::strtoll(low_text.c_str(), &end, 10);
        bool ok = *end == 0 && colon > 0;
        long long hi = std::strtoll(high_text.c_str(), &end, 10);
        ok = ok && *end == 0 && colon + 1 < v.size() && !errno;
        if (ok && lo <= hi && lo >= -16 && hi <= 16) return {lo, hi};
    }
    compile_error("--range ", v, ": expected MIN:MAX, integers with -16 <= MIN <= MAX <= 16 (e.g. --range -2:2)");
}

std::vector<int64_t> parse_list(const std::string &flag, const std::string &v) {
    std::vector<int64_t> out;
    std::stringstream in(v);
    std::string item;
    while (std::getline(in, item, ',')) {
        char *end = nullptr;
        long long x = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end) compile_error(flag, " ", v, ": expected integers separated by commas");
        out.push_back(x);
    }
    if (out.empty()) compile_error(flag, " ", v, ": expected integers separated by commas");
    return out;
}

}  // namespace

double CostModel::predict(const DesignMetrics &m) const {
    if (m.outputs <= 0) return 0;
    return (double)m.warps * (double)m.steps * (step + exchange * (double)m.exchanges_per_step) / (double)m.outputs +
           load * m.loads_per_output;
}

std::string Propagation::text() const {
    switch (kind) {
    case Kind::InPlace: return ure + "=mem";
    case Kind::Forwarded: return ure + "=fwd" + tuple_text(direction);
    case Kind::Accumulated: return ure + "=acc" + tuple_text(direction);
    }
    return ure;
}

std::string ExploredDesign::propagation_text() const {
    std::string s;
    for (const Propagation &p : propagation) s += (s.empty() ? "" : " ") + p.text();
    return s;
}

std::string ExploredDesign::matrix_text() const {
    std::string s;
    for (size_t r = 0; r < matrix.size(); r++) {
        s += r ? "; " : "";
        for (size_t c = 0; c < matrix[r].size(); c++) s += (c ? " " : "") + std::to_string(matrix[r][c]);
    }
    return s;
}

const char *explore_usage_text() {
    return "  --explore           search transforms and propagations of the spec's UREs; writes designs.csv,\n"
           "                      designs.json and pareto.csv into the -o directory (docs/exploration.md;\n"
           "                      installed: share/doc/pulse/exploration.md)\n"
           "  --range MIN:MAX     matrix entries the explorer tries (default -1:2)\n"
           "  --space-rows N      space rows of the explored matrices (default 1: a linear array)\n"
           "  --fix-row R=a,b,..  hold matrix row R (0-based; the time row is the last) at these entries\n"
           "  --budget SECONDS    stop checking candidates after this long (default: no limit)\n"
           "  --top K             designs the explorer prints (default 10)\n"
           "  --cost S,X,L        cost model coefficients: per step, per lane exchange, per load (default 1,1,2)\n"
           "  --keep-duplicates   also enumerate mirrored arrays and reversed loops (left out by default)\n"
           "  --design ID         use candidate ID of the exploration (same --range, --space-rows, --fix-row,\n"
           "                      --keep-duplicates), or `best`: the one it ranks first\n"
           "                      instead of the spec's design, for --check, --report, --simulate, --emit ...\n";
}

bool parse_explore_flag(const std::string &flag, int &i, int argc, char **argv, ExploreOptions &o) {
    static const std::vector<std::string> valued{"--range", "--space-rows", "--fix-row", "--budget", "--top", "--cost", "--design"};
    if (flag == "--explore" || flag == "--keep-duplicates") {
        (flag == "--explore" ? o.explore : o.keep_duplicates) = true;
        return true;
    }
    if (std::find(valued.begin(), valued.end(), flag) == valued.end()) return false;
    if (i + 1 >= argc) compile_error(flag, " needs a value; see --help");
    const std::string v = argv[++i];
    auto count = [&](int64_t lo) {
        char *end = nullptr;
        errno = 0;
        long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end || errno || n < lo) compile_error(flag, " ", v, ": expected an integer >= ", lo);
        return (int64_t)n;
    };
    if (flag == "--range") std::tie(o.entry_min, o.entry_max) = parse_range(v);
    else if (flag == "--space-rows") {
        o.space_rows = (int)count(1);
        if (o.space_rows > 3) compile_error("--space-rows ", v, ": at most 3 (the validator checks any; Pulse lowers 1 or 2)");
    }
    else if (flag == "--top") o.top = (int)std::min<int64_t>(count(0), 1000000);
    else if (flag == "--design") o.design = v == "best" ? ExploreOptions::best_design : count(0);
    else if (flag == "--budget") {
        char *end = nullptr;
        double s = std::strtod(v.c_str(), &end);
        if (v.empty() || *end || !(s > 0)) compile_error("--budget ", v, ": expected a number of seconds > 0");
        o.budget_seconds = s;
    } else if (flag == "--cost") {
        std::stringstream in(v);
        std::string item;
        std::vector<double> c;
        while (std::getline(in, item, ',')) {
            char *end = nullptr;
            double x = std::strtod(item.c_str(), &end);
            if (item.empty() || *end || x < 0) compile_error("--cost ", v, ": expected three numbers >= 0, STEP,EXCHANGE,LOAD");
            c.push_back(x);
        }
        if (c.size() != 3) compile_error("--cost ", v, ": expected three numbers >= 0, STEP,EXCHANGE,LOAD");
        o.cost = CostModel{c[0], c[1], c[2]};
    } else {  // --fix-row
        size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0) compile_error("--fix-row ", v, ": expected R=a,b,... (e.g. --fix-row 1=0,1)");
        char *end = nullptr;
        const std::string row_text = v.substr(0, eq);  // strtol's end pointer points into it
        long r = std::strtol(row_text.c_str(), &end, 10);
        if (*end || r < 0) compile_error("--fix-row ", v, ": the row R must be an integer >= 0");
        o.fixed_rows[(int)r] = parse_list("--fix-row", v.substr(eq + 1));
    }
    return true;
}

Explorer::Explorer(const ir::UreProgram &base_program, ExploreOptions opts) : base(base_program), options(std::move(opts)) {
    if (!base.schedule.transform) {
        compile_error("--explore: ", base.name, " has no space-time transform; give it one (any matrix) to name the "
                      "source loops to explore and the destination loops");
    }
    const ir::SpaceTimeTransform &t = *base.schedule.transform;
    const std::vector<std::string> &src = t.source_loops;
    const size_t rows = (size_t)options.space_rows + 1;
    if (!t.destination_loops.empty() && t.destination_loops.size() != rows) {
        compile_error("--explore --space-rows ", options.space_rows, ": the spec's transform has ", t.destination_loops.size(),
                      " destination loops, so it takes ", t.destination_loops.size() - 1,
                      " space row(s); give --space-rows ", t.destination_loops.size() - 1, " or change the spec's transform");
    }
    for (const auto &[r, row] : options.fixed_rows) {
        if (r >= (int)rows) compile_error("--fix-row ", r, "=...: there are ", rows, " rows (0 to ", rows - 1, "; the time row is ", rows - 1, ")");
        if (row.size() != src.size()) {
            compile_error("--fix-row ", r, "=...: a row has one entry per source loop of the transform (", src.size(), "), not ", row.size());
        }
    }

    // Rows: primitive vectors (a row with a common factor g is the design of
    // the row divided by g with g - 1 idle lanes or steps between used ones);
    // space rows first nonzero entry positive (negating one mirrors the array:
    // a row whose negation lies outside the range is taken negated, so no
    // array is lost when the range is not symmetric) and, with several, in
    // increasing order (swapping two transposes it).
    const auto all = vectors_in(src.size(), options.entry_min, options.entry_max);
    int64_t raw_rows = (int64_t)all.size();
    std::vector<std::vector<int64_t>> space, time;
    for (const auto &v : all) {
        if (gcd_of(v) != 1) continue;
        time.push_back(v);
        if (options.keep_duplicates || leads_positive(v)) space.push_back(v);
    }
    if (!options.keep_duplicates) {
        std::set<std::vector<int64_t>> kept(space.begin(), space.end());
        for (std::vector<int64_t> row : time) {
            for (int64_t &x : row) x = -x;
            if (leads_positive(row) && kept.insert(row).second) space.push_back(row);
        }
    }
    std::vector<std::vector<std::vector<int64_t>>> choices(rows);
    int64_t raw = 1;
    for (size_t r = 0; r < rows; r++) {
        auto fixed = options.fixed_rows.find((int)r);
        if (fixed != options.fixed_rows.end()) choices[r] = {fixed->second};
        else {
            choices[r] = r + 1 == rows ? time : space;
            raw *= raw_rows;
        }
    }
    std::vector<size_t> pick(rows, 0);
    for (const auto &c : choices) {
        if (c.empty()) compile_error("--range ", options.entry_min, ":", options.entry_max, " gives no nonzero row; widen it");
    }
    while (true) {
        std::vector<std::vector<int64_t>> m;
        for (size_t r = 0; r < rows; r++) m.push_back(choices[r][pick[r]]);
        bool ordered = true;
        for (size_t r = 1; r + 1 < rows; r++) {
            if (!options.fixed_rows.count((int)r) && !options.fixed_rows.count((int)r - 1) && !options.keep_duplicates) {
                ordered = ordered && m[r - 1] < m[r];
            }
        }
        if (ordered) matrices.push_back(m);
        size_t r = rows;
        while (r > 0 && pick[r - 1] + 1 == choices[r - 1].size()) pick[--r] = 0;
        if (r == 0) break;
        pick[r - 1]++;
    }
    // The spec's own matrix is a candidate even where an entry lies outside --range.
    const std::vector<std::vector<int64_t>> &own = base.schedule.transform->matrix;
    bool own_fits = own.size() == rows;
    for (const auto &[r, row] : options.fixed_rows) own_fits = own_fits && (size_t)r < own.size() && own[(size_t)r] == row;
    if (own_fits && spec_matrix_index() == matrices.size()) matrices.push_back(own);

    // Propagation: every carrier in place or along each direction that keeps
    // its input index; every reduction as written or reversed.
    std::vector<std::vector<Propagation>> options_of;
    std::vector<std::optional<Carrier>> carriers;
    std::vector<std::optional<Reduction>> reductions;
    for (const ir::Ure &u : base.ures) {
        std::optional<Carrier> c = find_carrier(base, src, u);
        std::optional<Reduction> red = c ? std::nullopt : find_reduction(base, src, u);
        if (!c && !red) continue;
        std::vector<Propagation> opts;
        if (c) {
            opts.push_back(Propagation{u.name, Propagation::Kind::InPlace, {}});
            for (const auto &d : c->directions) opts.push_back(Propagation{u.name, Propagation::Kind::Forwarded, d});
        } else {
            std::vector<int64_t> d = on_source(base, src, red->distance), back;
            for (int64_t x : d) back.push_back(-x);
            opts.push_back(Propagation{u.name, Propagation::Kind::Accumulated, d});
            opts.push_back(Propagation{u.name, Propagation::Kind::Accumulated, back});
        }
        options_of.push_back(opts);
        carriers.push_back(c);
        reductions.push_back(red);
    }
    std::vector<size_t> at(options_of.size(), 0);
    while (true) {
        Variant v;
        v.program = base;
        v.program.schedule.transform.reset();
        for (size_t k = 0; k < options_of.size(); k++) {
            const Propagation &prop = options_of[k][at[k]];
            v.propagation.push_back(prop);
            if (carriers[k]) {
                if (prop.kind == Propagation::Kind::InPlace) read_carrier_in_place(v.program, *carriers[k]);
                else forward_carrier(v.program, *carriers[k], src, prop.direction);
            } else if (at[k] == 1) {
                reverse_reduction(v.program, *reductions[k]);
            }
        }
        // A variant the reference interpreter cannot order (its UREs need
        // loops run both ways) could not be checked against it: left out.
        try {
            reanalyze(v.program);
            variants.push_back(std::move(v));
        } catch (const CompileError &e) {
            if (e.refusal != Refusal::NoSequentialOrder && e.refusal != Refusal::ReadBeforeDefinition) throw;
            unordered++;
        }
        size_t k = options_of.size();
        while (k > 0 && at[k - 1] + 1 == options_of[k - 1].size()) at[--k] = 0;
        if (k == 0) break;
        at[k - 1]++;
    }
    if (variants.empty()) {
        compile_error("--explore: no propagation of ", base.name, "'s UREs has a sequential reference order");
    }
    keep_one_per_reversal_class();
    removed = raw * (int64_t)variants.size() - candidate_count();
}

void Explorer::keep_one_per_reversal_class() {
    // Reversing a set of source loops (x_k -> min_k + max_k - x_k) negates
    // their matrix columns and direction entries: the same design run in
    // the other order along those loops, provided every input index keeps
    // its shape (each index unchanged or negated: the same elements read in
    // the same or the mirrored memory order). Of each class of candidates so
    // related, one is kept: the one with the fewest reductions reversed, then
    // the first in (variant, matrix) order.
    const std::vector<std::string> &src = base.schedule.transform->source_loops;
    const size_t n = src.size(), space = (size_t)options.space_rows;
    if (options.keep_duplicates) {
        for (size_t v = 0; v < variants.size(); v++) {
            for (size_t m = 0; m < matrices.size(); m++) candidates.emplace_back(v, m);
        }
        return;
    }
    std::vector<size_t> masks;
    for (size_t mask = 1; mask < (size_t(1) << n); mask++) {
        std::map<std::string, Expr> flipped;
        for (size_t k = 0; k < n; k++) {
            if (mask >> k & 1) flipped[src[k]] = -var(src[k]);
        }
        // Unchanged or negated in the source loops (other loops, such as
        // the instance loops, only offset the index).
        auto free_of_source = [&](const Expr &e) {
            return std::none_of(src.begin(), src.end(), [&](const std::string &v) { return expr_uses_var(e, v); });
        };
        bool keeps_shape = true;
        for (const ir::InputAccess &a : base.input_accesses) {
            for (const Expr &e : a.index) {
                const Expr image = substitute(flipped, e);
                keeps_shape = keeps_shape && (free_of_source(simplify_exact(image - e)) || free_of_source(simplify_exact(image + e)));
            }
        }
        if (keeps_shape) masks.push_back(mask);
    }
    std::map<std::vector<std::vector<int64_t>>, size_t> matrix_index;
    for (size_t m = 0; m < matrices.size(); m++) matrix_index[matrices[m]] = m;
    std::map<std::string, size_t> variant_index;
    auto key = [](const std::vector<Propagation> &props) {
        std::string k;
        for (const Propagation &p : props) k += p.text() + " ";
        return k;
    };
    for (size_t v = 0; v < variants.size(); v++) variant_index[key(variants[v].propagation)] = v;
    // A reversal maps variant v onto variant w as the same design only if
    // w's dependences are v's mirrored (each distance along a reversed loop
    // negated): then every dependence takes the same steps and PEs up to a
    // sign, and the two are valid or invalid together. A recurrence the
    // variants do not redirect (a DP table's) is not mirrored: reversing its
    // loop makes another program, and both candidates stay.
    auto dependences = [&](size_t v, size_t mask) {
        const ir::UreProgram &p = variants[v].program;
        std::multiset<std::string> out;
        for (const ir::Dependence &d : p.dependences) {
            std::string k = d.consumer + "<-" + d.producer + (d.is_copy ? " copy" : "") + ":";
            for (size_t l = 0; l < p.loops.size(); l++) {
                const auto at = std::find(src.begin(), src.end(), p.loops[l].var);
                const bool reversed = at != src.end() && (mask >> (size_t)(at - src.begin()) & 1);
                k += std::to_string(reversed ? -d.distance[l] : d.distance[l]) + ",";
            }
            out.insert(k);
        }
        return out;
    };
    // Variant 0 takes every first option: each reduction as written.
    auto reversed = [&](size_t v) {
        int count = 0;
        for (size_t k = 0; k < variants[v].propagation.size(); k++) {
            const Propagation &p = variants[v].propagation[k];
            count += p.kind == Propagation::Kind::Accumulated && p.direction != variants[0].propagation[k].direction;
        }
        return count;
    };
    const size_t own = spec_matrix_index();
    for (size_t v = 0; v < variants.size(); v++) {
        for (size_t m = 0; m < matrices.size(); m++) {
            bool first = true;
            for (size_t mask : masks) {
                if (v == 0 && m == own) break;  // the spec's own design stays a candidate
                auto flip = [&](std::vector<int64_t> row) {
                    for (size_t k = 0; k < n; k++) row[k] = mask >> k & 1 ? -row[k] : row[k];
                    return row;
                };
                std::vector<std::vector<int64_t>> image;
                for (size_t r = 0; r < matrices[m].size(); r++) {
                    std::vector<int64_t> row = flip(matrices[m][r]);
                    if (r < space && !leads_positive(row)) {
                        for (int64_t &x : row) x = -x;
                    }
                    image.push_back(row);
                }
                if (space > 1 && options.fixed_rows.empty()) std::sort(image.begin(), image.begin() + (long)space);
                std::vector<Propagation> props = variants[v].propagation;
                for (Propagation &p : props) {
                    if (!p.direction.empty()) p.direction = flip(p.direction);
                }
                auto im = matrix_index.find(image);
                auto iv = variant_index.find(key(props));
                if (im == matrix_index.end() || iv == variant_index.end()) continue;
                if (dependences(v, mask) != dependences(iv->second, 0)) continue;  // not the same design
                first = first && std::make_tuple(reversed(iv->second), iv->second, im->second) >= std::make_tuple(reversed(v), v, m);
            }
            if (first) candidates.emplace_back(v, m);
        }
    }
}

void Explorer::check_id(int64_t id) const {
    if (id < 0 || id >= candidate_count()) {
        compile_error("--design ", id, ": the exploration with these options has candidates 0 to ",
                      candidate_count() - 1, "; give the same --range, --space-rows, --fix-row and --keep-duplicates as the exploration");
    }
}

const std::vector<Propagation> &Explorer::propagation(int64_t id) const {
    check_id(id);
    return variants[candidates[id].first].propagation;
}

const std::vector<std::vector<int64_t>> &Explorer::matrix(int64_t id) const {
    check_id(id);
    return matrices[candidates[id].second];
}

ir::SpaceTimeTransform Explorer::transform(int64_t id) const {
    check_id(id);
    ir::SpaceTimeTransform t = *base.schedule.transform;
    t.matrix = matrices[candidates[id].second];
    t.reverse.clear();  // the spec's reverse map inverts the spec's matrix, not this one
    return t;
}

ir::UreProgram Explorer::program(int64_t id) const {
    ir::SpaceTimeTransform t = transform(id);  // checks the id
    ir::UreProgram p = variants[candidates[id].first].program;
    p.schedule.transform = std::move(t);
    return p;
}

Exploration Explorer::run(std::ostream *progress) const {
    const auto start = std::chrono::steady_clock::now();
    Exploration result;
    result.candidates = candidate_count();
    result.duplicates_removed = removed;
    const std::vector<std::string> &src = base.schedule.transform->source_loops;
    std::vector<std::string> input_order;
    for (const ir::InputDecl &in : base.inputs) input_order.push_back(in.name);
    TransformChecker::CollisionMemo memo;
    if (progress) {
        *progress << "explore: " << variants.size() << " propagation variant(s) x " << matrices.size() << " matrices: "
                  << candidate_count() << " candidates (" << removed
                  << " left out: mirrored arrays and reversed loops, duplicates of designs kept; rows with a common factor, "
                     "the designs of the reduced row with idle lanes or steps)\n";
        if (unordered) {
            *progress << "  " << unordered << " propagation variant(s) left out: no sequential order of the loops "
                      << "computes their UREs, so the reference interpreter could not check them\n";
        }
    }
    double last_report = 0;
    int64_t valid = 0;
    // Per variant, once: its well-definedness and its dependences' isl model.
    std::vector<std::string> ill_defined(variants.size());
    std::vector<std::unique_ptr<TransformChecker>> checkers(variants.size());
    for (int64_t id = 0; id < candidate_count(); id++) {
        if (options.budget_seconds > 0 && seconds_since(start) > options.budget_seconds) {
            result.unchecked = candidate_count() - id;
            break;
        }
        const auto [v, m] = candidates[id];
        const Variant &variant = variants[v];
        if (!checkers[v]) {
            try {
                check_well_defined(variant.program);
            } catch (const CompileError &e) {
                if (e.refusal != Refusal::NotWellDefined) throw;
                ill_defined[v] = e.what();
            }
            checkers[v] = std::make_unique<TransformChecker>(variant.program, src);
        }
        ExploredDesign d;
        d.id = id;
        d.matrix = matrices[m];
        d.propagation = variant.propagation;
        if (!ill_defined[v].empty()) {
            d.well_defined = false;
            d.refusal = Refusal::NotWellDefined;
            d.message = ill_defined[v];
            result.designs.push_back(std::move(d));
            continue;
        }
        // The program is copied only for the valid candidates, which are lowered.
        TransformCheck check = checkers[v]->check(transform(id), &memo);
        d.verdict = check.verdict.kind;
        d.message = check.verdict.message;
        if (check.verdict.dependence) d.witness = check.verdict.dependence->consumer + " <- " + check.verdict.dependence->call_text;
        if (!check.verdict.first.empty()) d.witness = tuple_text(check.verdict.first) + " and " + tuple_text(check.verdict.second);
        if (d.verdict == VerdictKind::Valid) {
            // Lowered (linear and 2-D arrays), analysed and ranked; a
            // design the lowering refuses is recorded with the refusal.
            try {
                const sys::SystolicProgram systolic = lower_to_systolic(program(id));
                d.metrics = analyze_design(systolic);
                d.predicted = options.cost.predict(*d.metrics);
                valid++;
                // What the CUDA backend cannot map (several same-step
                // chains, an array too wide) is listed, not ranked.
                try {
                    KernelOptions rolled;  // the mapping's refusals, without unrolling every step
                    rolled.max_unrolled_steps = 0;
                    rolled.plan_required_inputs = false;  // a probe: the kernel is dropped
                    lower_to_kernel(systolic, "candidate", input_order, rolled);
                } catch (const CompileError &e) {
                    d.not_emittable = e.what();
                }
            } catch (const CompileError &e) {
                d.witness = "not lowered";
                d.refusal = e.refusal;
                d.message = e.what();
            }
        }
        result.designs.push_back(std::move(d));
        const double now = seconds_since(start);
        if (progress && now - last_report >= 1.0) {
            last_report = now;
            *progress << "  " << result.designs.size() << "/" << candidate_count() << " checked, " << valid << " valid, "
                      << std::fixed << std::setprecision(1) << now << " s\n"
                      << std::defaultfloat;
        }
    }

    // Rank the valid designs by predicted time (then fewer PEs, then id), and
    // mark the front of (outturn, utilization).
    std::vector<ExploredDesign *> ranked;
    for (ExploredDesign &d : result.designs) {
        if (d.ranked()) ranked.push_back(&d);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const ExploredDesign *a, const ExploredDesign *b) {
        if (a->predicted != b->predicted) return a->predicted < b->predicted;
        return a->metrics->pe_count < b->metrics->pe_count;
    });
    for (size_t i = 0; i < ranked.size(); i++) ranked[i]->rank = (int64_t)i + 1;
    for (ExploredDesign *a : ranked) {
        a->pareto = std::none_of(ranked.begin(), ranked.end(), [&](const ExploredDesign *b) {
            const DesignMetrics &x = *a->metrics, &y = *b->metrics;
            return y.outturn >= x.outturn && y.utilization >= x.utilization &&
                   (y.outturn > x.outturn || y.utilization > x.utilization);
        });
    }
    // The spec's own design: its matrix, every propagation as written (variant 0).
    const auto own = std::find(candidates.begin(), candidates.end(), std::make_pair(size_t(0), spec_matrix_index()));
    if (own != candidates.end()) result.spec_design = own - candidates.begin();
    result.seconds = seconds_since(start);
    return result;
}

size_t Explorer::spec_matrix_index() const {
    // As written, or with its space rows mirrored as the enumeration keeps them.
    std::vector<std::vector<int64_t>> mirrored = base.schedule.transform->matrix;
    for (size_t r = 0; r + 1 < mirrored.size(); r++) {
        if (!leads_positive(mirrored[r])) {
            for (int64_t &x : mirrored[r]) x = -x;
        }
    }
    for (const auto &m : {base.schedule.transform->matrix, mirrored}) {
        const auto it = std::find(matrices.begin(), matrices.end(), m);
        if (it != matrices.end()) return (size_t)(it - matrices.begin());
    }
    return matrices.size();
}

int64_t Explorer::best_design() const {
    const Exploration e = run(nullptr);
    for (const ExploredDesign &d : e.designs) {
        if (d.rank == 1) return d.id;
    }
    compile_error("--design best: the exploration of ", base.name, " found no valid design the CUDA backend can emit; widen --range");
}

void write_exploration(const Exploration &e, const std::string &spec_name, const ExploreOptions &o, const std::string &dir) {
    std::filesystem::create_directories(dir);
    auto open = [&](const std::string &file) {
        std::string path = (std::filesystem::path(dir) / file).string();
        auto out = std::make_unique<std::ofstream>(path);
        if (!*out) compile_error("cannot write ", path);
        return out;
    };
    const std::string header =
        "id,matrix,propagation,verdict,witness,class,dataflow,pes,steps,outputs,outturn,utilization,registers_per_pe,"
        "exchanges_per_step,exchanges_per_output,loads_per_output,warps,fits_warp,predicted,rank,pareto,emittable\n";
    auto row = [](const ExploredDesign &d) {
        std::ostringstream out;
        const std::string verdict = d.well_defined ? to_string(d.verdict) : "not well defined";
        out << d.id << "," << csv_quote(d.matrix_text()) << "," << csv_quote(d.propagation_text()) << "," << csv_quote(verdict)
            << "," << csv_quote(d.witness) << ",";
        if (d.valid()) {
            const DesignMetrics &m = *d.metrics;
            std::string flows;
            for (const auto &[name, flow] : m.dataflow) flows += (flows.empty() ? "" : " ") + name + "=" + sys::to_string(flow);
            out << m.design_class << "," << csv_quote(flows) << "," << m.pe_count << "," << m.steps << "," << m.outputs << ","
                << number(m.outturn) << "," << number(m.utilization) << "," << m.registers_per_pe << ","
                << m.exchanges_per_step << "," << number(m.exchanges_per_output) << "," << number(m.loads_per_output) << "," << m.warps << ","
                << (m.fits_warp() ? 1 : 0) << "," << number(d.predicted) << "," << d.rank << "," << (d.pareto ? 1 : 0) << ","
                << (d.not_emittable.empty() ? 1 : 0);
        } else {
            out << ",,,,,,,,,,,,,,,0,0";
        }
        return out.str() + "\n";
    };
    auto csv = open("designs.csv"), front = open("pareto.csv");
    *csv << header;
    *front << header;
    for (const ExploredDesign &d : e.designs) {
        *csv << row(d);
        if (d.pareto) *front << row(d);
    }
    auto json = open("designs.json");
    *json << "{\n  \"spec\": " << json_quote(spec_name) << ",\n  \"options\": {\"range\": [" << o.entry_min << ", "
          << o.entry_max << "], \"space_rows\": " << o.space_rows << ", \"fixed_rows\": {";
    bool first = true;
    for (const auto &[r, v] : o.fixed_rows) {
        *json << (first ? "" : ", ") << "\"" << r << "\": [";
        for (size_t i = 0; i < v.size(); i++) *json << (i ? ", " : "") << v[i];
        *json << "]";
        first = false;
    }
    *json << "}},\n  \"cost_model\": {\"step\": " << o.cost.step << ", \"exchange\": " << o.cost.exchange
          << ", \"load\": " << o.cost.load << "},\n  \"candidates\": " << e.candidates << ", \"duplicates_removed\": "
          << e.duplicates_removed << ", \"unchecked\": " << e.unchecked << ", \"seconds\": " << number(e.seconds)
          << ",\n  \"designs\": [\n";
    for (size_t i = 0; i < e.designs.size(); i++) {
        const ExploredDesign &d = e.designs[i];
        *json << "    {\"id\": " << d.id << ", \"matrix\": [";
        for (size_t r = 0; r < d.matrix.size(); r++) {
            *json << (r ? ", " : "") << "[";
            for (size_t c = 0; c < d.matrix[r].size(); c++) *json << (c ? ", " : "") << d.matrix[r][c];
            *json << "]";
        }
        *json << "], \"propagation\": {";
        for (size_t k = 0; k < d.propagation.size(); k++) {
            const Propagation &p = d.propagation[k];
            *json << (k ? ", " : "") << json_quote(p.ure) << ": " << json_quote(p.text().substr(p.ure.size() + 1));
        }
        *json << "}, \"verdict\": " << json_quote(d.well_defined ? to_string(d.verdict) : "not well defined")
              << ", \"witness\": " << json_quote(d.witness);
        if (d.refusal) *json << ", \"refusal\": " << json_quote(to_string(*d.refusal));
        if (!d.valid()) *json << ", \"message\": " << json_quote(d.message);
        if (d.valid()) {
            const DesignMetrics &m = *d.metrics;
            *json << ", \"class\": " << json_quote(m.design_class) << ", \"dataflow\": {";
            for (size_t k = 0; k < m.dataflow.size(); k++) {
                *json << (k ? ", " : "") << json_quote(m.dataflow[k].first) << ": " << json_quote(sys::to_string(m.dataflow[k].second));
            }
            *json << "}, \"forward\": [";
            for (size_t k = 0; k < m.forward.size(); k++) *json << (k ? ", " : "") << json_quote(m.forward[k]);
            *json << "], \"pes\": " << m.pe_count << ", \"steps\": " << m.steps << ", \"outputs\": " << m.outputs
                  << ", \"outturn\": " << number(m.outturn) << ", \"utilization\": " << number(m.utilization)
                  << ", \"registers_per_pe\": " << m.registers_per_pe << ", \"exchanges_per_step\": " << m.exchanges_per_step
                  << ", \"exchanges_per_output\": " << number(m.exchanges_per_output)
                  << ", \"loads_per_output\": " << number(m.loads_per_output) << ", \"warps\": " << m.warps
                  << ", \"fits_warp\": " << (m.fits_warp() ? "true" : "false") << ", \"predicted\": " << number(d.predicted)
                  << ", \"rank\": " << d.rank << ", \"pareto\": " << (d.pareto ? "true" : "false");
            if (!d.not_emittable.empty()) *json << ", \"not_emittable\": " << json_quote(d.not_emittable);
        }
        *json << "}" << (i + 1 < e.designs.size() ? "," : "") << "\n";
    }
    *json << "  ]\n}\n";
}

int run_exploration(const std::string &spec_name, const ir::UreProgram &base, const ExploreOptions &options,
                    const std::string &directory) {
    Explorer explorer(base, options);
    Exploration e = explorer.run(&std::cout);
    write_exploration(e, spec_name, options, directory);
    int64_t valid = 0, front = 0;
    for (const ExploredDesign &d : e.designs) {
        valid += d.valid();
        front += d.pareto;
    }
    std::cout << "explore " << spec_name << ": " << e.designs.size() << " candidates checked in " << std::setprecision(3)
              << e.seconds << " s, " << valid << " valid, " << front << " on the Pareto front of (outturn, utilization)";
    if (e.unchecked) std::cout << "; " << e.unchecked << " left unchecked by --budget";
    std::cout << "\n";
    // Valid designs the CUDA backend cannot map: listed (designs.json says why), not ranked.
    int64_t not_emittable = 0;
    const ExploredDesign *example = nullptr;
    for (const ExploredDesign &d : e.designs) {
        if (!d.valid() || d.not_emittable.empty()) continue;
        if (!not_emittable++) example = &d;
    }
    if (not_emittable) {
        std::cout << "  " << not_emittable << " valid design(s) the CUDA backend cannot emit, not ranked (designs.json says why; e.g. "
                  << example->id << ": " << example->not_emittable << ")\n";
    }
    if (e.spec_design < 0) {
        std::cout << "  the spec's own design is not a candidate (its matrix does not fit --space-rows or --fix-row)\n";
    } else {
        const ExploredDesign *own = nullptr;
        for (const ExploredDesign &d : e.designs) {
            if (d.id == e.spec_design) own = &d;
        }
        std::cout << "  the spec's own design: id " << e.spec_design;
        if (!own) std::cout << ", left unchecked by --budget\n";
        else if (own->rank) std::cout << ", rank " << own->rank << "\n";
        else if (own->valid()) std::cout << ", valid, not emittable\n";
        else std::cout << ", " << (own->well_defined ? to_string(own->verdict) : "not well defined") << "\n";
    }
    if (!valid && !e.designs.empty()) {
        // Say what stood in the way: the condition most candidates fail, with its most frequent witness.
        std::map<std::string, int64_t> causes;
        for (const ExploredDesign &d : e.designs) {
            causes[std::string(d.well_defined ? to_string(d.verdict) : "not well defined") + ": " + d.witness]++;
        }
        auto most = std::max_element(causes.begin(), causes.end(), [](auto &a, auto &b) { return a.second < b.second; });
        std::cout << "  no valid design: " << most->second << " candidates fail " << most->first
                  << "; widen --range (a dependence may need a larger time-row entry) or change --fix-row\n";
    }
    std::vector<const ExploredDesign *> best;
    for (const ExploredDesign &d : e.designs) {
        if (d.ranked() && d.rank <= options.top) best.push_back(&d);
    }
    std::sort(best.begin(), best.end(), [](auto *a, auto *b) { return a->rank < b->rank; });
    if (!best.empty()) std::cout << "  rank  id  class  matrix  propagation  PEs  steps  outturn  utilization  predicted\n";
    for (const ExploredDesign *d : best) {
        const DesignMetrics &m = *d->metrics;
        std::cout << "  " << d->rank << "  " << d->id << "  " << m.design_class << "  [" << d->matrix_text() << "]  "
                  << d->propagation_text() << "  " << m.pe_count << "  " << m.steps << "  " << number(m.outturn) << "  "
                  << number(100 * m.utilization) << "%  " << number(d->predicted) << (d->pareto ? "  (front)" : "") << "\n";
    }
    std::cout << "wrote designs.csv, designs.json, pareto.csv in " << directory << " (plots: " << installed_file("scripts/explore_plot.py")
              << " " << directory << "; emit one: --design ID --emit cuda)\n";
    return 0;
}

}  // namespace pulse
