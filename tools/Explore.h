// Design-space exploration (--explore): every space-time transform of a spec
// within a range of matrix entries, times every way its inputs can travel
// (read in place, or forwarded along a uniform direction by a generated copy
// chain) and every direction its reductions can accumulate in; each candidate
// validated, the valid ones measured (analyze_design) and ranked by a cost
// model. docs/exploration.md describes it.
#ifndef PULSE_EXPLORE_H
#define PULSE_EXPLORE_H

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/Report.h"
#include "analysis/Validate.h"
#include "ir/UreProgram.h"

namespace pulse {

/// The cost model: predicted cycles per output of a design =
///   warps * steps * (step + exchange * exchanges per step) / outputs + load * loads per output.
/// The coefficients are calibrated from measured times (scripts/explore_calibrate.py).
struct CostModel {
    double step = 1, exchange = 1, load = 2;
    double predict(const DesignMetrics &m) const;
};

struct ExploreOptions {
    int64_t entry_min = -1, entry_max = 2;  ///< --range MIN:MAX, the matrix entries tried
    int space_rows = 1;                     ///< --space-rows N
    /// --fix-row R=a,b,...: row R (0-based; the time row is the last) held at
    /// these entries instead of enumerated.
    std::map<int, std::vector<int64_t>> fixed_rows;
    double budget_seconds = 0;              ///< --budget S: stop checking after S seconds (0: no limit)
    int64_t design = -1;                    ///< --design ID: build candidate ID instead of the spec's own design
    static constexpr int64_t best_design = -2;  ///< --design best: the candidate ranked first
    int top = 10;                           ///< --top K: designs printed at the end
    CostModel cost;                         ///< --cost STEP,EXCHANGE,LOAD
    bool explore = false;                   ///< --explore
    /// --keep-duplicates: enumerate mirrored arrays and reversed loops too
    /// (each is a duplicate of a design kept; tests compare the two searches).
    bool keep_duplicates = false;
};

/// Help text for the flags parse_explore_flag accepts.
const char *explore_usage_text();
/// Parses flag argv[i] (advancing i past its value); false if it is not an explorer flag.
bool parse_explore_flag(const std::string &flag, int &i, int argc, char **argv, ExploreOptions &options);

/// How one value of the program travels in a candidate.
struct Propagation {
    std::string ure;
    enum class Kind { InPlace, Forwarded, Accumulated } kind = Kind::InPlace;
    std::vector<int64_t> direction;  ///< over the transform's source loops (Forwarded, Accumulated)
    std::string text() const;        ///< "X=mem", "X=fwd(1,-1)", "Z=acc(0,1)"
};

/// One candidate's outcome.
struct ExploredDesign {
    int64_t id = 0;
    std::vector<std::vector<int64_t>> matrix;  ///< space rows, then the time row
    std::vector<Propagation> propagation;
    VerdictKind verdict = VerdictKind::Valid;
    bool well_defined = true;    ///< false: the generated UREs read an undefined value (message says which)
    std::string witness;         ///< the failing dependence, or the two colliding points
    std::optional<Refusal> refusal;  ///< why a valid transform was not lowered, or why the UREs are not well defined
    std::string message;
    std::optional<DesignMetrics> metrics;  ///< valid designs
    double predicted = 0;        ///< CostModel::predict, valid designs
    bool pareto = false;         ///< on the front of (outturn, utilization), both maximized
    int64_t rank = 0;            ///< 1 = best predicted; 0 for invalid designs and those not emittable
    /// Why the CUDA backend cannot lower this valid design ("" if it can):
    /// such designs are listed, not ranked.
    std::string not_emittable;
    bool valid() const { return well_defined && verdict == VerdictKind::Valid && metrics.has_value(); }
    /// Valid and emittable: the designs that are ranked.
    bool ranked() const { return valid() && not_emittable.empty(); }
    std::string propagation_text() const;
    std::string matrix_text() const;  ///< "1 1; 0 1"
};

struct Exploration {
    std::vector<ExploredDesign> designs;  ///< checked candidates, by id
    /// The candidate that is the spec's own design (its matrix, every
    /// propagation as written; a candidate even outside --range); -1 if its
    /// matrix does not fit --space-rows or --fix-row.
    int64_t spec_design = -1;
    int64_t candidates = 0;               ///< after removing symmetric duplicates
    int64_t duplicates_removed = 0;       ///< mirror images and scaled rows not enumerated
    int64_t unchecked = 0;                ///< left out by the time budget
    double seconds = 0;
};

/// The candidates of one base program: propagation variants x matrices.
class Explorer {
public:
    /// `base` is a lowered spec with a space-time transform (its source and
    /// destination loops are kept; its matrix is what is enumerated).
    Explorer(const ir::UreProgram &base, ExploreOptions options);
    int64_t candidate_count() const { return (int64_t)candidates.size(); }
    int64_t duplicates_removed() const { return removed; }
    /// Candidate `id` as a URE program with its transform, ready for compile_to_systolic.
    ir::UreProgram program(int64_t id) const;
    ir::SpaceTimeTransform transform(int64_t id) const;
    const std::vector<Propagation> &propagation(int64_t id) const;
    const std::vector<std::vector<int64_t>> &matrix(int64_t id) const;
    /// Checks every candidate (or until the budget), ranks the valid ones.
    Exploration run(std::ostream *progress) const;
    /// The id of the candidate ranked first (a CompileError if none is valid
    /// and emittable): what `--design best` builds.
    int64_t best_design() const;

private:
    struct Variant {
        ir::UreProgram program;  ///< UREs rewritten, front passes run, no transform
        std::vector<Propagation> propagation;
    };
    ir::UreProgram base;
    ExploreOptions options;
    std::vector<Variant> variants;
    std::vector<std::vector<std::vector<int64_t>>> matrices;
    /// (variant, matrix) of every candidate, by id: one per class of designs
    /// equal up to mirroring the array, scaling a row or reversing loops.
    std::vector<std::pair<size_t, size_t>> candidates;
    int64_t removed = 0;
    int64_t unordered = 0;  ///< propagation variants without a sequential reference order
    void check_id(int64_t id) const;
    void keep_one_per_reversal_class();
    /// The index of the spec's own matrix among `matrices` (matrices.size() if absent).
    size_t spec_matrix_index() const;
};

/// designs.csv, designs.json and pareto.csv in `directory`.
void write_exploration(const Exploration &exploration, const std::string &spec_name, const ExploreOptions &options,
                       const std::string &directory);

/// --explore: runs the explorer on `base`, prints progress and the best
/// designs, writes the files into `directory`. Returns the exit status.
int run_exploration(const std::string &spec_name, const ir::UreProgram &base, const ExploreOptions &options,
                    const std::string &directory);

}  // namespace pulse

#endif
