// The differential fuzzer over random URE systems (RandomSystem.h), each built
// through the language as a user writes a spec, with random transforms:
//  - the well-definedness check must agree with the reference interpreter, and
//    an ill-defined system must be refused by every path to code;
//  - the validator must agree with brute-force enumeration (BruteForce.h) on
//    1 to 3 loops with one or two space rows;
//  - every accepted linear design must simulate, and run on the kernel
//    executor to the reference interpreter's result in every mapping the
//    backends use (one PE per lane, several PEs per lane, several warps of a
//    block with gpu_threads; time loop unrolled and rolled), and a sample of
//    them on the CM emulation;
//  - every accepted 2-D design (two space rows) likewise, in both of its
//    mappings (second row on register slots; rows on lanes and warps, half
//    of those as a tile of 2 or 3 PEs per thread, half of the tiles with
//    their inputs staged in shared memory);
//  - a broadcast (a same-step chain of a value the same on every PE) under
//    a unimodular transform is computed in place on each PE, in every mapping.
// Part of the systems are drawn with shapes that once compiled wrongly
// (RandomSystem.h's ShapeClass: chains with computed roots, chains of
// chains, nested roots, mixed types, extreme inputs); the summary counts
// each shape drawn, accepted, as a same-step chain, and executed.
// About a third of the systems of two or three loops are drawn on an affine
// domain (A.where(a . x <= c), one or two constraints: never empty, never the
// whole box, keeping every output element), with every recurrence read
// guarded to lie in the domain; brute force enumerates the exact domain, and
// the summary counts those systems and their designs run.
// A failing case is shrunk and printed as a spec with the seed that draws it.
//
// PULSE_RANDOM_SCALE=n draws n times the systems; PULSE_FUZZ_SEED=s starts at
// system seed s; PULSE_FUZZ_SYSTEMS=n draws exactly n systems (with the seed a
// failure prints and PULSE_FUZZ_SYSTEMS=1, that one case's system again).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <unistd.h>

#include "analysis/CheckWellDefined.h"
#include "analysis/Validate.h"
#include "codegen/CodeGenCM.h"
#include "Emit.h"
#include "exec/ExprCompiler.h"
#include "exec/InputRegions.h"
#include "exec/KernelExecutor.h"
#include "exec/Simulator.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "BruteForce.h"
#include "CmBuild.h"
#include "IntelCompile.h"
#include "CroppedRun.h"
#include "RandomSystem.h"
#include "TestUtil.h"

using namespace pulse;
using namespace pulse::test;

namespace {

int64_t env_int(const char *name, int64_t fallback) {
    const char *text = std::getenv(name);
    return text ? std::atoll(text) : fallback;
}

/// The mappings of an array onto a GPU the kernel executor runs.
enum Mapping { OnePerLane, SeveralPerLane, SeveralWarps, mapping_count };
const char *const mapping_names[] = {"one PE per lane", "several PEs per lane", "several warps (gpu_threads)"};

struct Stats {
    int systems = 0, ill_defined = 0, cases = 0, failures = 0;
    std::map<std::string, int> front_refusals;  ///< systems the front end refuses (no reference order, ...)
    std::map<Verdict, int> by_verdict;
    std::map<size_t, int> cases_by_loops, cases_by_space_rows;
    std::map<std::string, int> types;
    int simulated = 0, executed = 0, executed_cropped = 0, several_per_lane = 0, lowering_refused = 0, kernel_refused = 0;
    std::map<std::string, int> refusals;
    int executed_by[mapping_count][2] = {};  ///< kernels executed per mapping, time loop unrolled / rolled
    int executed_shared_state = 0;           ///< of the several-warp kernels, those holding recurrences in shared memory
    /// Per shape class: systems drawn with it, linear designs accepted, of
    /// those with its chain a same-step chain, designs run on the kernel executor.
    int shape_drawn[shape_class_count] = {}, shape_accepted[shape_class_count] = {},
        shape_same_step[shape_class_count] = {}, shape_executed[shape_class_count] = {};
    int shaped_systems = 0;       ///< systems with at least one shape class
    int broadcasts_in_place = 0;  ///< broadcasts checked in place (per kernel)
    int broadcasts_missed = 0;    ///< broadcasts under a transform whose reverse map divides, taken from a source lane
    /// Systems on an affine domain (System::constraints: non-empty, not the
    /// whole box), of those the well-defined ones; their validator cases,
    /// linear designs accepted and kernels executed.
    int constrained = 0, constrained_well_defined = 0, constrained_cases = 0, constrained_accepted = 0, constrained_executed = 0;
    /// Accepted 2-D designs (two space rows): simulated, and kernels executed
    /// with the second row on register slots / with gpu_threads on (lanes, warps).
    int simulated_2d = 0, executed_2d_slots = 0, executed_2d_warps = 0, refused_2d = 0;
    int executed_2d_interleaved = 0;  ///< of executed_2d_slots: columns interleaved over the lanes
    /// Of executed_2d_warps: a tile of PEs per thread (--pes-per-thread), and
    /// of those with the inputs staged in shared memory (columns blocked by lane).
    int executed_2d_tiles = 0, executed_2d_tiles_staged = 0;
    /// Of executed_2d_slots: designs the validator accepts only on register
    /// slots (a value read from a lower slot of its lane in the same step).
    int executed_2d_slot_reads = 0;
    /// Systems with a reduction output (Output::reduce), kernels with one
    /// executed, and kernels the mapping refused for one (indexed by a loop of the array).
    int reduction_systems = 0, reduction_executed = 0, reduction_refused = 0;
    /// Systems that read a table at input values, and kernels executed of them.
    int table_systems = 0, table_executed = 0;
    /// Of those, kernels that staged the table in shared memory (tab.in(A).store_in(MemoryType::Shared)),
    /// and with a table of more entries than 16 copy passes of the block's threads (the copy in several batches).
    int table_shared_executed = 0, table_shared_batches = 0;
    /// Rolled kernels whose other inputs were cached in shared memory and
    /// staged a run of steps at a time (--shared-steps), executed; of those,
    /// double-buffered (--double-buffer).
    int runs_staged_executed = 0, runs_double_buffered = 0;
    int runs_refused = 0;  ///< refused by stage_in_shared (then run unstaged)
    /// Accepted linear designs given a data bound (a ragged batch) on a loop
    /// that only advances time: refused as they must be (a read above the
    /// bound), and kernels executed of the others.
    int ragged_cases = 0, ragged_refused = 0, ragged_executed = 0;
    int ragged_plain_executed = 0;  ///< of ragged_executed: kernels with an output that is not a reduction
    /// Accepted linear designs with a loop outside the array run two
    /// instances a warp (gpu_blocks and vectorize on it): kernels executed,
    /// of them those where bind_relus bound a relu, and refusals.
    int packed_executed = 0, packed_relus_bound = 0, packed_refused = 0;
    int saturating_executed = 0;  ///< kernels executed whose definitions saturate (saturating_add, saturating_sub)
};

/// Whether a vector let of `body` binds a relu (max(v, 0): bind_relus).
bool binds_a_relu(const Halide::Internal::Stmt &body) {
    struct Find : Halide::Internal::IRVisitor {
        bool found = false;
        using IRVisitor::visit;
        void visit(const Halide::Internal::LetStmt *op) override {
            if (const Halide::Internal::Max *m = op->value.as<Halide::Internal::Max>(); m && op->value.type().is_vector()) {
                const Halide::Internal::Broadcast *zero = m->b.as<Halide::Internal::Broadcast>();
                found |= zero && Halide::Internal::is_const_zero(zero->value);
            }
            IRVisitor::visit(op);
        }
    } find;
    body.accept(&find);
    return find.found;
}

/// The checks' inputs: random (never zero), with the system's extreme values planted.
Buffers case_inputs(const ir::UreProgram &program, const System &system, uint32_t seed) {
    Buffers inputs = random_input_buffers(program, seed);
    plant_extremes(system, inputs, seed);
    return inputs;
}

/// A kernel as lower_to_kernel leaves it: its lets (name -> value; the
/// lowering mints every name once, kir::NameGenerator) and whether its time
/// loop is rolled (a loop inside the array instance, where the lowering
/// unrolls every other loop).
struct LoweredKernel : Halide::Internal::IRVisitor {
    std::map<std::string, Halide::Expr> lets;
    bool rolled = false;

    explicit LoweredKernel(const kir::Kernel &kernel) { kernel.body.accept(this); }

    /// Whether the lowering takes broadcast `var`'s value from a chain's
    /// source lane instead of computing it in place (where its values read no
    /// other lane): one of its lets reads, through the lets it uses, a value
    /// shuffled from the lane chain_source finds (shfl_idx(v, l), l from
    /// pulse.chain_source), or shifts along the lanes a value that a shift
    /// fed (rounds of shifts along the chain). The lets of `var` are those
    /// the lowering mints from its name (kir::NameGenerator: VAR.TAG.tPOSITION
    /// and the names minted from that one all begin with `VAR.`).
    bool takes_from_source_lane(const std::string &var) const {
        namespace kir_op = kir::intrinsic;
        for (const auto &[name, value] : lets) {
            if (name.compare(0, var.size() + 1, var + ".") != 0) continue;
            bool moved = false;
            kir::for_each_call(value, [&](const Halide::Internal::Call *op) {
                if (op->name == kir_op::shfl_idx) {
                    moved |= reaches(op->args[1], [](const Halide::Internal::Call *c) { return c->name == kir_op::chain_source; });
                } else if (is_shift(op)) {
                    moved |= reaches(op->args[0], is_shift);
                }
            });
            if (moved) return true;
        }
        return false;
    }

    using IRVisitor::visit;
    void visit(const Halide::Internal::LetStmt *op) override { walk(op); }
    void visit(const Halide::Internal::Block *op) override { walk(op); }
    void visit(const Halide::Internal::ProducerConsumer *op) override {
        const bool outer = inside_instance;
        inside_instance |= op->name == kir::array_instance_marker;
        IRVisitor::visit(op);
        inside_instance = outer;
    }
    void visit(const Halide::Internal::For *op) override {
        rolled |= inside_instance;
        IRVisitor::visit(op);
    }

private:
    bool inside_instance = false;

    static bool is_shift(const Halide::Internal::Call *c) {
        return c->name == kir::intrinsic::shfl_up || c->name == kir::intrinsic::shfl_down || c->name == kir::intrinsic::array_shift;
    }

    /// Whether `e`, or a let it reads (and so on), holds a call `wanted` accepts.
    template<typename Wanted>
    bool reaches(const Halide::Expr &e, Wanted wanted) const {
        std::vector<Halide::Expr> pending{e};
        std::set<std::string> seen;
        while (!pending.empty()) {
            const Halide::Expr next = pending.back();
            pending.pop_back();
            bool found = false;
            kir::for_each_call(next, [&](const Halide::Internal::Call *c) { found |= wanted(c); });
            if (found) return true;
            class Reads : public Halide::Internal::IRVisitor {
            public:
                std::vector<std::string> names;
                using IRVisitor::visit;
                void visit(const Halide::Internal::Variable *op) override { names.push_back(op->name); }
            } reads;
            next.accept(&reads);
            for (const std::string &n : reads.names) {
                auto it = lets.find(n);
                if (it != lets.end() && seen.insert(n).second) pending.push_back(it->second);
            }
        }
        return false;
    }

    /// Long chains of lets and blocks: walked in a loop, not recursively.
    void walk(Halide::Internal::Stmt s) {
        while (s.defined()) {
            if (const auto *let = s.as<Halide::Internal::LetStmt>()) {
                lets.emplace(let->name, let->value);
                s = let->body;
            } else if (const auto *block = s.as<Halide::Internal::Block>()) {
                block->first.accept(this);
                s = block->rest;
            } else {
                s.accept(this);
                return;
            }
        }
    }
};

/// A failure's kind ("validator", "simulator", ...) and what happened.
struct Failure {
    std::string kind, detail;
    bool failed() const { return !kind.empty(); }
};

/// What the system part of a case came to.
enum class SystemOutcome { RefusedByFrontEnd, IllDefined, WellDefined };

/// Builds the system and checks well-definedness against the interpreter.
Failure check_system(const System &system, const Transform &transform, uint32_t seed, ir::UreProgram &program,
                     SystemOutcome &outcome, Stats &stats) {
    try {
        program = build_system(system, transform);
    } catch (const CompileError &e) {
        // The front end refuses only systems no sequential order computes.
        if (e.refusal != Refusal::NoSequentialOrder && e.refusal != Refusal::ReadBeforeDefinition) return {"front end", e.what()};
        stats.front_refusals[to_string(e.refusal)]++;
        outcome = SystemOutcome::RefusedByFrontEnd;
        return {};
    }
    std::string check_error, interpreter_error;
    try {
        check_well_defined(program);
    } catch (const CompileError &e) {
        check_error = e.what();
    }
    try {
        ir::realize(program, case_inputs(program, system, seed));
    } catch (const EvaluationError &e) {
        interpreter_error = e.what();
    }
    if (check_error.empty() != interpreter_error.empty()) {
        return {"well-definedness", "the check says " + (check_error.empty() ? "well defined" : check_error) +
                                        "; the reference interpreter says " +
                                        (interpreter_error.empty() ? "well defined" : interpreter_error)};
    }
    if (check_error.empty()) {
        outcome = SystemOutcome::WellDefined;
        return {};
    }
    // Ill defined: every path to code (all go through compile_to_systolic) refuses it.
    outcome = SystemOutcome::IllDefined;
    try {
        compile_to_systolic(program);
    } catch (const CompileError &e) {
        if (e.refusal == Refusal::NotWellDefined) return {};
        return {"ill-defined spec", std::string("refused for another reason than well-definedness: ") + e.what()};
    }
    return {"ill-defined spec", "compiled (the interpreter says: " + interpreter_error + ")"};
}

/// `kernel` run by the kernel executor on `inputs` (outputs poisoned first)
/// against `expected`: empty if they agree, else the first difference.
std::string execute_against(const kir::Kernel &kernel, const Buffers &inputs, const Buffers &expected) {
    Buffers actual = inputs;
    for (const auto &[name, buffer] : expected) {
        Halide::Buffer<> out = buffer.copy();
        poison(out);
        actual[name] = out;
    }
    try {
        execute_kernel(kernel, actual);
        Buffers outputs;
        for (const auto &[name, buffer] : expected) outputs[name] = actual.at(name);
        return compare_outputs(expected, outputs);
    } catch (const EvaluationError &e) {
        return e.what();
    }
}

/// An accepted 2-D design (two space rows) in both of its GPU mappings: the
/// second row on each lane's register slots, and gpu_threads(s1, s2) (the
/// first row on the lanes, the second on the warps of a block). Each is
/// lowered to the systolic IR for its mapping (the linear PE index depends on
/// it), simulated, and run on the kernel executor with the time loop unrolled
/// or rolled by turns, at the design's sizes and once one smaller.
Failure check_two_dimensional(const System &system, const Transform &transform, const ir::UreProgram &program, uint32_t seed,
                              Stats &stats, const char *&phase) {
    const Buffers inputs = case_inputs(program, system, seed + 1);
    const Buffers expected = ir::realize(program, inputs);
    std::vector<std::string> order;
    for (const ir::InputDecl &in : program.inputs) order.push_back(in.name);
    int64_t turn = seed;
    for (const auto &row : transform.matrix)
        for (int64_t v : row) turn = 3 * turn + v;
    for (bool warps : {false, true}) {
        ir::UreProgram mapped = program;
        const std::vector<std::string> &dst = mapped.schedule.transform->destination_loops;
        if (warps) mapped.schedule.gpu_threads = {dst[0], dst[1]};
        const std::string label = std::string("2-D array, ") + (warps ? "rows on (lanes, warps)" : "second row on register slots");
        sys::SystolicProgram systolic;
        phase = "compile_to_systolic (2-D)";
        try {
            systolic = compile_to_systolic(mapped);
        } catch (const CompileError &e) {
            // A same-step cycle, or a first row wider than a warp's lanes (gpu_threads),
            // or a transform valid on register slots only (a same-step read of a lower slot).
            const bool slots_only = warps && e.refusal == Refusal::InvalidTransform && check_transform(program).verdict.kind == VerdictKind::Valid &&
                                    check_transform(mapped).verdict.kind == VerdictKind::DataAvailability;
            if (e.refusal != Refusal::SameStepCycle && !(warps && e.refusal == Refusal::TooManyPes) && !slots_only) {
                return {label + ": lowering", e.what()};
            }
            stats.refused_2d++;
            stats.refusals[std::string("2-D: ") + to_string(e.refusal)]++;
            continue;
        }
        phase = "simulation (2-D)";
        const std::string simulated = compare_outputs(expected, simulate(systolic, inputs));
        if (!simulated.empty()) return {label + ": simulator", simulated};
        stats.simulated_2d++;
        KernelOptions options;
        const bool rolled = ((turn >> (warps ? 1 : 0)) & 1) != 0;
        if (rolled) options.max_unrolled_steps = 0;
        // On the warps, half the designs ask for a tile of 2 or 3 PEs per
        // thread (refused where a value moves between PEs), and half of
        // those cache every input in shared memory (the box staged whole,
        // the tile's columns blocked by lane).
        const bool tile = warps && ((turn >> 2) & 1) != 0, staged = tile && ((turn >> 3) & 1) != 0;
        if (tile) options.pes_per_thread = 2 + (int)((turn >> 4) & 1);
        if (staged) {
            for (const ir::InputDecl &in : program.inputs) {
                if (in.name != "tab") systolic.source.schedule.stagings.push_back(ir::Staging{in.name, recurrence_name(0), {}, {}, MemoryType::Shared});
            }
        }
        kir::Kernel kernel;
        phase = "lower_to_kernel (2-D)";
        try {
            kernel = lower_to_kernel(systolic, "k", order, options);
            phase = "optimize_kernel (2-D)";
            optimize_kernel(kernel);
        } catch (const CompileError &e) {
            // The tile refuses a move between PEs (TapBeyondWarp) or a
            // thread's share past its limits; a staged box may have a size
            // not known at generation time or pass a block's shared memory
            // (refused naming the staging and its fix).
            const bool staging_refused =
                staged && (e.refusal == Refusal::ResourceLimit || std::string(e.what()).find(".store_in(MemoryType::Shared)") != std::string::npos);
            if (phase == std::string("optimize_kernel (2-D)") && !staging_refused) return {label + ": optimize_kernel", e.what()};
            stats.refused_2d++;
            stats.refusals[std::string("2-D") + (tile ? " tile" : "") + ": " + to_string(e.refusal)]++;
            continue;
        }
        phase = "kernel execution (2-D)";
        const std::string executed = execute_against(kernel, inputs, expected);
        if (!executed.empty()) return {label + (rolled ? ", rolled" : "") + ": kernel executor", executed};
        phase = "kernel execution at run-time sizes (2-D)";
        const std::string cropped = test::run_cropped_against_reference(kernel, inputs, expected, 1);
        if (!cropped.empty()) return {label + ": kernel executor at run-time sizes", cropped};
        (warps ? stats.executed_2d_warps : stats.executed_2d_slots)++;
        if (kernel.interleaved_rows > 0) stats.executed_2d_interleaved++;
        if (kernel.warp_rows > 0) stats.executed_2d_tiles++;
        if (kernel.warp_columns_blocked) stats.executed_2d_tiles_staged++;
        if (!warps) {
            const std::vector<DependenceTiming> timings = check_transform(program).timings;
            const bool slot_read = std::any_of(timings.begin(), timings.end(), [](const DependenceTiming &d) {
                return d.taken && d.dt == 0 && !d.dependence->is_copy &&
                       std::any_of(d.dependence->distance.begin(), d.dependence->distance.end(), [](int64_t v) { return v != 0; });
            });
            if (slot_read) stats.executed_2d_slot_reads++;
        }
    }
    return {};
}

/// The validator against brute force; an accepted linear design then through
/// the simulator and the kernel executor against the interpreter. `phase`
/// names the step under way (for an exception).
Failure check_transform_phases(const System &system, const Transform &transform, const ir::UreProgram &program,
                               uint32_t seed, Stats &stats, bool &accepted_linear, const char *&phase) {
    accepted_linear = false;
    const BruteResult brute = brute_force(program);
    const ValidatorResult validator = run_validator(program);
    const bool constrained = !system.constraints.empty();
    stats.cases++;
    stats.constrained_cases += constrained;
    stats.by_verdict[brute.verdict]++;
    stats.cases_by_loops[program.loops.size()]++;
    stats.cases_by_space_rows[program.schedule.transform->matrix.size() - 1]++;
    const std::string why = compare_with_brute_force(program, brute, validator);
    if (!why.empty()) return {"validator", why};
    if (validator.verdict != Verdict::Accept) return {};
    if (program.schedule.transform->matrix.size() == 3) return check_two_dimensional(system, transform, program, seed, stats, phase);

    sys::SystolicProgram systolic;
    phase = "compile_to_systolic";
    try {
        systolic = compile_to_systolic(program);
    } catch (const CompileError &e) {
        if (e.refusal != Refusal::SameStepCycle) return {"lowering", e.what()};
        stats.lowering_refused++;
        stats.refusals[to_string(e.refusal)]++;
        return {};
    }
    accepted_linear = true;
    stats.constrained_accepted += constrained;
    const unsigned shapes = shape_classes(system), same_step = same_step_classes(system, transform);
    for (int c = 0; c < shape_class_count; c++) {
        stats.shape_accepted[c] += (shapes >> c) & 1;
        stats.shape_same_step[c] += (same_step >> c) & 1;
    }
    phase = "simulation";
    {
        const Buffers inputs = case_inputs(program, system, seed);
        const std::string simulated = compare_outputs(ir::realize(program, inputs), simulate(systolic, inputs));
        if (!simulated.empty()) return {"simulator", simulated};
        stats.simulated++;
    }

    // The kernel executor, in every mapping the backends use: the array on
    // one warp (one PE per lane, or several when it is wider than a warp),
    // each with the time loop unrolled and rolled; wider than a warp also on
    // the warps of a block (gpu_threads on the space loop), with the time
    // loop unrolled or rolled by turns (the widest kernels cost the most),
    // and by turns its recurrences held in shared memory.
    phase = "reference (kernel inputs)";
    const Buffers inputs = case_inputs(program, system, seed + 1);
    const Buffers expected = ir::realize(program, inputs);
    std::vector<std::string> order;
    for (const ir::InputDecl &in : program.inputs) order.push_back(in.name);
    const std::vector<int> in_place = broadcasts(system, transform);
    bool ran = false;
    for (bool threads : {false, true}) {
        if (threads && systolic.pe_count <= kir::warp_size) continue;  // the same mapping as one warp's
        sys::SystolicProgram mapped = systolic;
        if (threads) mapped.source.schedule.gpu_threads = {mapped.source.schedule.transform->destination_loops.front()};
        int64_t turn = seed;
        for (const auto &row : transform.matrix)
            for (int64_t v : row) turn = 3 * turn + v;
        // Half the arrays over warps hold every recurrence in shared memory
        // (F.store_in(MemoryType::Shared)): every move goes through it.
        if (threads && (turn & 4) != 0) {
            for (const sys::Variable &v : systolic.variables) {
                mapped.source.schedule.stagings.push_back(ir::Staging{v.name, v.name, {}, {}, MemoryType::Shared});
            }
        }
        // Half the kernels of a system with a table stage it whole in shared memory,
        // copied once per block (tab.in(A).store_in(MemoryType::Shared)).
        const bool table_shared = uses_table(system) && (turn & 8) != 0;
        if (table_shared) mapped.source.schedule.stagings.push_back(ir::Staging{"tab", recurrence_name(0), {}, {}, MemoryType::Shared});
        for (bool rolled : {false, true}) {
            if (threads && rolled != ((turn & 1) != 0)) continue;
            KernelOptions options;
            sys::SystolicProgram staged_inputs;  // `mapped` with its other inputs cached in shared memory, where drawn
            if (rolled) options.max_unrolled_steps = 0;
            // Half the rolled time loops issue each block's input loads a
            // block ahead; half of the others cache the inputs other than the
            // table in shared memory, staged a run of 1 or 2 iterations of the
            // rolled loop at a time (--shared-steps), half of those double-buffered.
            if (rolled && (turn & 2) != 0) options.prefetch_walks = true;
            bool runs = rolled && !options.prefetch_walks && (turn & 16) != 0;
            if (runs) {
                staged_inputs = mapped;
                for (const ir::InputDecl &in : program.inputs) {
                    if (in.name == "tab") continue;
                    staged_inputs.source.schedule.stagings.push_back(ir::Staging{in.name, recurrence_name(0), {}, {}, MemoryType::Shared});
                }
                options.shared_steps = 1 + (turn >> 6) % 2;
                options.shared_double_buffer = (turn & 128) != 0;
            }
            kir::Kernel kernel;
            phase = "lower_to_kernel";
            try {
                kernel = lower_to_kernel(runs ? staged_inputs : mapped, "k", order, options);
            } catch (const CompileError &e) {
                // The GPU mapping refuses what it cannot honour (a design wider than
                // its limits, a chain of values that differ between PEs on several
                // lanes or warps, ...), but never a broadcast.
                for (int r : in_place) {
                    if (e.refusal != Refusal::SameStepChain || e.subject != recurrence_name(r)) continue;
                    if (integer_reverse(transform)) return {"broadcast not in place", e.what()};
                    stats.broadcasts_missed++;
                }
                stats.kernel_refused++;
                stats.reduction_refused += e.refusal == Refusal::ReductionNotLowered;
                stats.refusals[to_string(e.refusal)]++;
                continue;
            }
            const LoweredKernel lowered(kernel);
            std::string moved;  // a broadcast taken from a chain's source lane
            for (int r : in_place) {
                if (moved.empty() && lowered.takes_from_source_lane(recurrence_name(r))) moved = recurrence_name(r);
            }
            if (!moved.empty()) {
                // Under a transform whose reverse map divides, the lowering may
                // not see that the root follows the time step: a missed broadcast.
                if (integer_reverse(transform)) return {"broadcast not in place", moved + " is taken from a chain's source lane"};
                stats.broadcasts_missed++;
            } else {
                stats.broadcasts_in_place += (int)in_place.size();
            }
            const Mapping mapping = kernel.warps_per_array > 1 ? SeveralWarps : kernel.pes_per_lane > 1 ? SeveralPerLane : OnePerLane;
            const bool is_rolled = lowered.rolled;
            const std::string label = std::string("kernel executor (") + mapping_names[mapping] + (is_rolled ? ", rolled" : "") +
                                      (table_shared ? ", tab.in(A).store_in(MemoryType::Shared))" : ")");
            phase = "optimize_kernel";
            // Inputs staged in runs may find no rolled loop long enough, a box
            // of no constant size, more shared memory than a block has, or more
            // loads than a thread holds double-buffered: refused with the fix
            // named (stage_in_shared), and the kernel runs without them. A
            // large table staged in shared memory may pass a block's bytes:
            // refused likewise, never run.
            // (Called while a refusal is handled: any other is thrown again.)
            const auto count_table_refusal = [&](const CompileError &e) {
                if (!table_shared || e.refusal != Refusal::ResourceLimit) throw;
                stats.kernel_refused++;
                stats.refusals[to_string(e.refusal)]++;
            };
            bool refused = false;
            try {
                optimize_kernel(kernel);
            } catch (const CompileError &e) {
                if (runs && (e.refusal == Refusal::ResourceLimit || std::string(e.what()).find("--shared-steps") != std::string::npos)) {
                    stats.runs_refused++;
                    runs = false;
                    options.shared_steps = 0;
                    options.shared_double_buffer = false;
                    kernel = lower_to_kernel(mapped, "k", order, options);
                    try {
                        optimize_kernel(kernel);
                    } catch (const CompileError &again) {
                        count_table_refusal(again);
                        refused = true;
                    }
                } else {
                    count_table_refusal(e);
                    refused = true;
                }
            }
            if (refused) continue;
            phase = "kernel execution";
            const std::string executed = execute_against(kernel, inputs, expected);
            if (!executed.empty()) return {label, executed};
            if (!ran) {
                // Run-time sizes: every output one smaller, once per design.
                phase = "kernel execution at run-time sizes";
                const std::string cropped = test::run_cropped_against_reference(kernel, inputs, expected, 1);
                if (!cropped.empty()) return {label + " at run-time sizes", cropped};
                stats.executed_cropped++;
            }
            stats.executed++;
            stats.reduction_executed += system.outputs[0].reduce >= 0;
            stats.table_executed += uses_table(system);
            // (A table staged is a block array: the test counts what the kernel holds, not what was asked.)
            const bool staged = table_shared && !kernel.block_arrays.empty();
            stats.table_shared_executed += staged;
            stats.table_shared_batches += staged && system.table_extent > 16 * kernel.block_warps() * kir::warp_size;
            stats.runs_staged_executed += runs;
            stats.runs_double_buffered += runs && options.shared_double_buffer;
            stats.saturating_executed += uses_saturating(system);
            stats.constrained_executed += constrained;
            stats.several_per_lane += kernel.pes_per_lane > 1;
            stats.executed_by[mapping][is_rolled]++;
            stats.executed_shared_state += !kernel.shared_state.empty();
            ran = true;
        }
    }
    if (ran) {
        for (int c = 0; c < shape_class_count; c++) stats.shape_executed[c] += (shapes >> c) & 1;
    }
    // Every design with a loop outside the array: its instances on the
    // grid (gpu_blocks) and two a warp as the lanes of vectors (vectorize),
    // pack_instances and the passes after it on random code.
    int64_t turn = seed;
    for (const auto &row : transform.matrix)
        for (int64_t v : row) turn = 3 * turn + v;
    std::string outer;
    for (const ir::Loop &l : program.loops) {
        const auto &src = program.schedule.transform->source_loops;
        if (std::find(src.begin(), src.end(), l.var) == src.end()) outer = l.var;
    }
    // (The executor's vectors hold integers of 32 bits or fewer.)
    auto narrow_integer = [](const Halide::Type &t) { return (t.is_int() || t.is_uint()) && t.bits() <= 32; };
    bool packable = narrow_integer(system.type) && std::all_of(system.input_types.begin(), system.input_types.end(), narrow_integer);
    for (const Recurrence &r : system.recurrences) packable &= narrow_integer(r.type);
    if (!outer.empty() && packable && systolic.pe_count <= kir::warp_size) {
        sys::SystolicProgram mapped = systolic;
        mapped.source.schedule.gpu_blocks = {outer};
        mapped.source.schedule.vectorize = std::make_pair(outer, 2);
        KernelOptions options;
        if ((turn & 16) != 0) options.max_unrolled_steps = 0;
        kir::Kernel kernel;
        phase = "lower_to_kernel (vectorize)";
        try {
            kernel = lower_to_kernel(mapped, "k", order, options);
            phase = "optimize_kernel (vectorize)";
            optimize_kernel(kernel);
        } catch (const CompileError &e) {
            stats.packed_refused++;
            stats.refusals[std::string("vectorize: ") + to_string(e.refusal)]++;
            return {};
        }
        phase = "kernel execution (vectorize)";
        const std::string label = std::string("kernel executor (vectorize(") + outer + ", 2))";
        const std::string executed = execute_against(kernel, inputs, expected);
        if (!executed.empty()) return {label, executed};
        phase = "kernel execution at run-time sizes (vectorize)";
        const std::string cropped = test::run_cropped_against_reference(kernel, inputs, expected, 1);
        if (!cropped.empty()) return {label + " at run-time sizes", cropped};
        stats.packed_executed++;
        stats.packed_relus_bound += binds_a_relu(kernel.body);
    }
    return {};
}

Failure check_transform(const System &system, const Transform &transform, const ir::UreProgram &program, uint32_t seed,
                        Stats &stats, bool &accepted_linear) {
    const char *phase = "validation";
    try {
        return check_transform_phases(system, transform, program, seed, stats, accepted_linear, phase);
    } catch (const std::exception &e) {
        return {std::string("exception in ") + phase, e.what()};
    }
}

/// Every check on one case, from the system up (the shrinker's test).
Failure check_case(const System &system, const Transform &transform, uint32_t seed) {
    Stats ignored;
    ir::UreProgram program;
    SystemOutcome outcome;
    try {
        Failure f = check_system(system, transform, seed, program, outcome, ignored);
        if (f.failed() || outcome != SystemOutcome::WellDefined) return f;
        bool accepted_linear;
        return check_transform(system, transform, program, seed, ignored, accepted_linear);
    } catch (const std::exception &e) {
        return {"exception", e.what()};
    }
}

using CaseCheck = std::function<Failure(const System &, const Transform &)>;

/// The failing case made as small as it goes while `check` fails it the same way.
void shrink(System &system, Transform &transform, Failure &failure, const CaseCheck &check) {
    for (bool smaller = true; smaller;) {
        smaller = false;
        for (auto &[s, t] : shrink_candidates(system, transform)) {
            Failure f = check(s, t);
            if (f.kind != failure.kind) continue;
            system = s, transform = t, failure = f;
            smaller = true;
            break;
        }
    }
}

/// The failure, shrunk, as a spec to paste and the seed that draws the unshrunk case.
std::string shrunk_report(const System &system, const Transform &transform, uint32_t seed, Failure failure,
                          const CaseCheck &check) {
    System small = system;
    Transform small_transform = transform;
    shrink(small, small_transform, failure, check);
    std::ostringstream text;
    text << failure.kind << ": " << failure.detail << "\n"
         << "shrunk reproducer (rerun the unshrunk case with PULSE_FUZZ_SEED=" << seed << " PULSE_FUZZ_SYSTEMS=1";
    // The shapes (RandomSystem.h) the shrunk case keeps: what the failure needs.
    const unsigned shapes = shape_classes(small) | same_step_classes(small, small_transform);
    for (int c = 0, n = 0; c < shape_class_count; c++) {
        if ((shapes >> c) & 1) text << (n++ ? " " : "; shapes ") << shape_class_name(c);
    }
    text << "):\n" << system_cpp(small, small_transform);
    // As the compiler reads it (the domain's constraints, the dependences and their conditions).
    try {
        ir::print(text, build_system(small, small_transform));
    } catch (const std::exception &e) {
        text << "(not built: " << e.what() << ")\n";
    }
    return text.str();
}

/// An accepted linear design again with a data bound, `where(l < len(...))`
/// on a loop l that only advances time (a ragged batch), where its outputs
/// allow one: refused where a recurrence reads l at a higher value, else
/// every evaluator runs each instance on its own prefix (the interpreter
/// the reference; an output that is not a reduction left poisoned past each
/// instance's bound). A failure is reported with the spec, not shrunk.
void check_ragged(const System &system, const Transform &transform, uint32_t seed, Stats &stats, std::vector<std::string> &reports) {
    const int loop = ragged_loop_for(system, transform);
    if (loop < 0) return;
    System ragged = system;
    ragged.ragged_loop = loop;
    for (int l = 0; l < (int)system.loops(); l++) {
        if (!std::count(transform.source.begin(), transform.source.end(), l)) ragged.ragged_by.push_back(l);
    }
    stats.ragged_cases++;
    auto fail = [&](const std::string &what) {
        stats.failures++;
        reports.push_back("data bound: " + what + " (PULSE_FUZZ_SEED=" + std::to_string(seed) + ")\n" + system_cpp(ragged, transform));
    };
    ir::UreProgram program;
    try {
        program = build_system(ragged, transform);
    } catch (const CompileError &e) {
        if (reads_above(ragged, loop) && std::string(e.what()).find("at a higher") != std::string::npos) stats.ragged_refused++;
        else fail(std::string("refused: ") + e.what());
        return;
    }
    if (reads_above(ragged, loop)) return fail("accepted, though a recurrence reads the bounded loop at a higher value");
    const int executed = stats.executed;
    bool accepted = false;
    Failure f;
    try {
        f = check_transform(ragged, transform, program, seed, stats, accepted);
    } catch (const std::exception &e) {
        f = {"exception", e.what()};
    }
    if (f.failed()) return fail(f.kind + ": " + f.detail);
    if (!accepted) return fail("the transform accepted on the box is refused with the bound");
    stats.ragged_executed += stats.executed - executed;
    if (std::any_of(system.outputs.begin(), system.outputs.end(), [](const Output &o) { return o.reduce < 0; }))
        stats.ragged_plain_executed += stats.executed - executed;
}

/// One accepted linear design, for the CM emulation sample.
struct Design {
    uint32_t seed;
    System system;
    Transform transform;
};

struct Run {
    Stats stats;
    std::vector<Design> accepted;  ///< a spread of accepted linear designs
    std::vector<std::string> reports;
};

/// Draws and checks the systems; each failure shrunk and reported.
Run run_fuzzer() {
    Run run;
    const int64_t scale = std::max<int64_t>(1, env_int("PULSE_RANDOM_SCALE", 1));
    const int64_t systems = env_int("PULSE_FUZZ_SYSTEMS", 150 * scale);
    const uint32_t first_seed = (uint32_t)env_int("PULSE_FUZZ_SEED", 1);
    for (int64_t n = 0; n < systems; n++) {
        const uint32_t seed = first_seed + (uint32_t)n;
        std::mt19937 rng(seed);
        const System system = draw_system(rng);
        std::vector<Transform> transforms;
        for (int k = 0; k < 12; k++) transforms.push_back(draw_transform(rng, system, system.loops() >= 2 && k % 2 ? 2 : 1));
        // A reduction output is lowered where its loop lies outside the
        // array: two thirds of its system's transforms leave that loop out.
        if (system.outputs[0].reduce >= 0) {
            for (size_t k = 0; k < transforms.size(); k++)
                if (k % 3 != 1) leave_out_kept_loop(system, transforms[k]);
            // And the aligners' transform (s = one loop, t = the sum of the
            // array's loops) with the reduced loop left out, each loop on the
            // PEs in turn: the others then only advance time, and a data
            // bound on one of them is drawn (check_ragged).
            Transform aligner;
            for (int l = 0; l < (int)system.loops(); l++) aligner.source.push_back(l);
            aligner.matrix.assign(2, std::vector<int64_t>(aligner.source.size(), 1));
            leave_out_kept_loop(system, aligner);
            for (size_t c = 0; aligner.source.size() >= 2 && c < aligner.source.size(); c++) {
                Transform t = aligner;
                for (size_t k = 0; k < t.source.size(); k++) t.matrix[0][k] = k == c;
                transforms.push_back(t);
            }
        }
        Stats &stats = run.stats;
        stats.systems++;
        const unsigned shapes = shape_classes(system);
        stats.shaped_systems += shapes != 0;
        for (int c = 0; c < shape_class_count; c++) stats.shape_drawn[c] += (shapes >> c) & 1;
        std::ostringstream type;
        type << system.type;
        stats.types[type.str()]++;
        stats.reduction_systems += system.outputs[0].reduce >= 0;
        stats.table_systems += uses_table(system);
        if (!system.constraints.empty()) {
            // An affine domain: some points of the box, not all (counted).
            const int64_t points = domain_points(system);
            if (points == 0 || points == box_points(system)) {
                stats.failures++;
                run.reports.push_back("drawing: the domain of PULSE_FUZZ_SEED=" + std::to_string(seed) + " has " +
                                      std::to_string(points) + " of its box's " + std::to_string(box_points(system)) +
                                      " points\n" + system_cpp(system, transforms[0]));
                continue;
            }
            stats.constrained++;
        }
        std::set<std::string> reported;  // failure kinds of this system shrunk already
        auto report = [&](const Transform &transform, Failure failure) {
            stats.failures++;
            // Other transforms of a system mostly fail as its first did: shrunk once per kind.
            if (!reported.insert(failure.kind).second) {
                run.reports.push_back(failure.kind + ": " + failure.detail + " (another transform of PULSE_FUZZ_SEED=" +
                                      std::to_string(seed) + ", as above)\n");
                return;
            }
            run.reports.push_back(shrunk_report(system, transform, seed, failure,
                                                [seed](const System &s, const Transform &t) { return check_case(s, t, seed); }));
        };
        ir::UreProgram program;
        SystemOutcome outcome;
        Failure f;
        try {
            f = check_system(system, transforms[0], seed, program, outcome, stats);
        } catch (const std::exception &e) {
            f = {"exception", e.what()};
        }
        if (f.failed()) {
            report(transforms[0], f);
            continue;
        }
        if (outcome == SystemOutcome::IllDefined) stats.ill_defined++;
        if (outcome != SystemOutcome::WellDefined) continue;
        stats.constrained_well_defined += !system.constraints.empty();
        for (const Transform &transform : transforms) {
            apply_transform(program, transform);
            bool accepted_linear = false;
            try {
                f = check_transform(system, transform, program, seed, stats, accepted_linear);
            } catch (const std::exception &e) {
                f = {"exception", e.what()};
            }
            if (f.failed()) report(transform, f);
            else if (accepted_linear) run.accepted.push_back({seed, system, transform});
            if (!f.failed() && accepted_linear) check_ragged(system, transform, seed, stats, run.reports);
        }
    }
    return run;
}

const Run &fuzzer_run() {
    static const Run run = run_fuzzer();
    return run;
}

}  // namespace

TEST_CASE("random URE systems: well-definedness, validator, simulator and kernel executor agree", "[random][systems]") {
    const Run &run = fuzzer_run();
    Stats s = run.stats;
    for (const std::string &r : run.reports) UNSCOPED_INFO(r);
    std::ostringstream types;
    for (const auto &[t, n] : s.types) types << " " << t << " " << n;
    std::cout << "random systems: " << s.systems << " systems (" << s.ill_defined << " ill defined and refused, "
              << s.front_refusals["no sequential order"] << " with no sequential order;" << types.str() << "), "
              << s.cases << " validator cases (" << s.cases_by_loops[1] << "/" << s.cases_by_loops[2] << "/"
              << s.cases_by_loops[3] << " with 1/2/3 loops, " << s.cases_by_space_rows[2] << " with two space rows; "
              << s.by_verdict[Verdict::Accept] << " accepted), " << s.simulated << " simulated, " << s.executed
              << " kernels executed (" << s.executed_cropped << " of them also at run-time sizes one smaller, " << s.several_per_lane << " with several PEs per lane, " << s.kernel_refused
              << " refused by the mapping, " << s.lowering_refused << " by the lowering), " << s.failures
              << " disagreements\n";
    std::cout << "  kernels executed per mapping (time loop unrolled + rolled):";
    for (int m = 0; m < mapping_count; m++) {
        std::cout << (m ? "," : "") << " " << mapping_names[m] << " " << s.executed_by[m][0] << " + " << s.executed_by[m][1];
    }
    std::cout << " (" << s.executed_shared_state << " holding their recurrences in shared memory, " << s.runs_staged_executed
              << " staging their inputs in shared memory a run of steps at a time, " << s.runs_double_buffered << " of them double-buffered, "
              << s.runs_refused << " refused that staging and run without it)";
    std::cout << "; " << s.broadcasts_in_place << " broadcasts computed in place (" << s.broadcasts_missed
              << " taken from a chain's source lane under a reverse map that divides)\n";
    std::cout << "  shapes (systems drawn / linear designs accepted / as a same-step chain / run on the kernel executor), "
              << s.shaped_systems << " systems with one or more:";
    for (int c = 0; c < shape_class_count; c++) {
        std::cout << (c ? "," : "") << " " << shape_class_name(c) << " " << s.shape_drawn[c] << "/" << s.shape_accepted[c] << "/";
        if (c <= SeveralChains) std::cout << s.shape_same_step[c];
        else std::cout << "-";
        std::cout << "/" << s.shape_executed[c];
    }
    std::cout << "\n";
    std::cout << "  affine domains (A.where: one or two constraints, the domain neither empty nor the box): " << s.constrained
              << " systems (" << s.constrained_well_defined << " well defined), " << s.constrained_cases << " validator cases, "
              << s.constrained_accepted << " linear designs accepted, " << s.constrained_executed << " kernels executed\n";
    std::cout << "  2-D arrays (two space rows, accepted): " << s.simulated_2d << " simulated, kernels executed: "
              << s.executed_2d_slots << " with the second row on register slots (" << s.executed_2d_interleaved
              << " of them with columns interleaved over the lanes, " << s.executed_2d_slot_reads
              << " reading a lower slot in the same step), " << s.executed_2d_warps
              << " on (lanes, warps) (" << s.executed_2d_tiles << " of them a tile of PEs per thread, " << s.executed_2d_tiles_staged
              << " of those with their inputs staged in shared memory); " << s.refused_2d << " refused by the lowering or the mapping\n";
    std::cout << "  reduction outputs (Out = 3; Out = op(Out, ...)): " << s.reduction_systems << " systems, "
              << s.reduction_executed << " kernels executed, " << s.reduction_refused
              << " refused by the mapping (indexed by a loop of the array)\n";
    std::cout << "  tables read at input values (tab(cast(Int(32), x(...)))): " << s.table_systems << " systems, "
              << s.table_executed << " kernels executed (" << s.table_shared_executed << " with the table staged in shared memory, "
              << s.table_shared_batches << " of them copying it in several batches)\n";
    std::cout << "  data bounds (A.where(l < len(instance)) on a loop that only advances time, a ragged batch; its cases "
              << "counted above too): " << s.ragged_cases << " accepted designs bounded, " << s.ragged_refused
              << " refused (a read above the bound), " << s.ragged_executed << " kernels executed ("
              << s.ragged_plain_executed << " with an output that is not a reduction, written up to the bound)\n";
    std::cout << "  two instances a warp (gpu_blocks and vectorize on a loop outside the array): " << s.packed_executed
              << " kernels executed (" << s.packed_relus_bound << " with a relu bound by bind_relus), " << s.packed_refused
              << " refused\n";
    std::cout << "  saturating + and - (saturating_add(t, k), saturating_sub(t, k)): " << s.saturating_executed << " kernels executed\n";
    for (const auto &[reason, n] : s.refusals) std::cout << "  refused " << n << "x: " << reason << "\n";
    for (const std::string &r : run.reports) std::cout << "disagreement: " << r << "\n";
    REQUIRE(s.failures == 0);
    // Every outcome the fuzzer tells apart must occur, or it proves little.
    if (!std::getenv("PULSE_FUZZ_SYSTEMS")) {
        CHECK(s.ill_defined > 0);
        CHECK(s.simulated > 0);
        CHECK(s.ragged_executed > 0);
        CHECK(s.ragged_plain_executed > 0);
        CHECK(s.packed_executed > 0);
        CHECK(s.saturating_executed > 0);
        CHECK(s.executed + s.reduction_refused >= 2 * s.simulated * 9 / 10);
        for (Verdict v : {Verdict::Accept, Verdict::Processor, Verdict::Data, Verdict::CrossesInstances}) {
            INFO(verdict_name(v));
            CHECK(s.by_verdict.count(v));
        }
        CHECK(s.cases_by_loops[3] > 0);
        CHECK(s.cases_by_space_rows[2] > 0);
        CHECK(s.executed_2d_slots > 0);
        CHECK(s.executed_2d_warps > 0);
        CHECK(s.executed_2d_tiles > 0);
        CHECK(s.executed_2d_tiles_staged > 0);
        for (int m = 0; m < mapping_count; m++) {
            INFO(mapping_names[m]);
            CHECK(s.executed_by[m][0] + s.executed_by[m][1] > 0);
        }
        CHECK(s.executed_by[OnePerLane][1] > 0);
        CHECK(s.executed_shared_state > 0);
        CHECK(s.runs_staged_executed > 0);
        CHECK(s.runs_double_buffered > 0);
        // Every shape is drawn, and the chain shapes run as same-step chains.
        for (int c = 0; c < shape_class_count; c++) {
            INFO("shape " << shape_class_name(c));
            CHECK(s.shape_executed[c] > 0);
            if (c <= SeveralChains) CHECK(s.shape_same_step[c] > 0);
        }
        CHECK(s.broadcasts_in_place > 0);
        // Affine domains are drawn and run (not skipped).
        CHECK(s.constrained > 0);
        CHECK(s.constrained_executed > 0);
        // Reduction outputs are drawn and run.
        CHECK(s.reduction_systems > 0);
        CHECK(s.reduction_executed > 0);
        // So are tables.
        CHECK(s.table_systems > 0);
        CHECK(s.table_executed > 0);
        CHECK(s.table_shared_executed > 0);
        CHECK(s.table_shared_batches > 0);
    }
}

TEST_CASE("the shrinker keeps a failure while making the case smaller", "[random][systems]") {
    // A stand-in failure: "the system has a recurrence read at distance 2".
    // Drawn systems with one shrink to a single loop and recurrence whose reproducer still shows it.
    std::mt19937 rng(7);
    for (int n = 0; n < 200; n++) {
        System system = draw_system(rng);
        Transform transform = draw_transform(rng, system, 1);
        auto has_distance_two = [](const System &s) {
            for (const Recurrence &r : s.recurrences)
                for (const Term &t : r.terms)
                    for (int64_t d : t.distance)
                        if (t.kind == Term::RecurrenceRead && (d == 2 || d == -2)) return true;
            return false;
        };
        if (!has_distance_two(system)) continue;
        for (bool smaller = true; smaller;) {
            smaller = false;
            for (auto &[s, t] : shrink_candidates(system, transform)) {
                if (!has_distance_two(s)) continue;
                system = s, transform = t, smaller = true;
                break;
            }
        }
        REQUIRE(system.recurrences.size() == 1);
        REQUIRE(system.loops() == 1);
        REQUIRE(system.outputs.size() == 1);
        const std::string cpp = system_cpp(system, transform);
        INFO(cpp);
        REQUIRE((cpp.find("A(i - 2)") != std::string::npos || cpp.find("A(i + 2)") != std::string::npos));
        return;
    }
    FAIL("no drawn system reads at distance 2");
}

namespace {

/// The CM emulation of one design, emitted, built and run in `dir`.
Failure check_cm(const System &system, const Transform &transform, const std::filesystem::path &dir) {
    const std::string name = "shrink";
    try {
        ir::UreProgram program = build_system(system, transform);
        std::vector<std::string> order;
        for (const ir::InputDecl &in : program.inputs) order.push_back(in.name);
        emit_cm_emulation(compile_to_systolic(program), name, order, dir.string(), Target::cm_gen9());
    } catch (const CompileError &e) {
        return {"CM refused", e.what()};
    }
    std::string log, out;
    if (run_command(cm_emulation_compile_command((dir / (name + "_emu.cpp")).string(), (dir / (name + "_emu")).string()), &log) != 0) {
        return {"CM emulation build", log};
    }
    run_command("'" + (dir / (name + "_emu")).string() + "' 0 5 2>&1", &out);
    if (out != "PASS\n") return {"CM emulation run", out};
    return {};
}

/// About 16 accepted designs of 32-bit types, spread over the run, emitted
/// for CM into `dir` (with the emulation harness where `emulation`): the CM
/// sample, which the CM emulation runs and Intel's compiler compiles.
struct CmSample {
    std::vector<std::string> names;
    std::map<std::string, const Design *> by_name;
    int refused = 0;      ///< over the CM register budget, or by the kernel mapping
    int passed_over = 0;  ///< for a smaller design of their window
};

CmSample sample_cm_designs(const Run &run, const std::filesystem::path &dir, bool emulation) {
    CmSample sample;
    std::vector<std::string> &names = sample.names;
    std::map<std::string, const Design *> &by_name = sample.by_name;
    int &refused = sample.refused;
    // 32-bit types only: the CM backend's scattered writes move dwords, and it
    // refuses narrower outputs (docs/backends.md).
    std::vector<const Design *> wide;
    for (const Design &d : run.accepted) {
        bool dwords = true;
        for (const Recurrence &r : d.system.recurrences) dwords &= r.type.bits() == 32;
        for (const Halide::Type &t : d.system.input_types) dwords &= t.bits() == 32;
        if (dwords) wide.push_back(&d);
    }
    const size_t step = std::max<size_t>(1, wide.size() / 16);
    int &passed_over = sample.passed_over;
    for (size_t window = 0; window < wide.size(); window += step) {
        // A design of the window whose CM source stays small: a large one takes
        // the compiler many seconds (the run's time), and the window has others.
        const size_t candidates = std::min<size_t>({step, 3, wide.size() - window});
        for (size_t i = window; i < window + candidates; i++) {
            const Design &design = *wide[i];
            ir::UreProgram program = build_system(design.system, design.transform);
            std::vector<std::string> order;
            for (const ir::InputDecl &in : program.inputs) order.push_back(in.name);
            const std::string name = "design" + std::to_string(i);
            try {
                emit_cm(compile_to_systolic(program), name, order, dir.string(), Target::cm_gen9(), {}, emulation);
            } catch (const CompileError &e) {
                // Over the register budget (test_cm has the numbers), or refused
                // by the kernel IR's mapping as the CUDA lowering is; never a misuse.
                INFO(e.what());
                CHECK(e.refusal != Refusal::Misuse);
                CHECK(e.refusal != Refusal::UnsupportedByTarget);
                refused++;
                break;
            }
            if (std::filesystem::file_size(dir / (name + "_genx.cpp")) > 32 * 1024 && i + 1 < window + candidates) {
                passed_over++;
                continue;
            }
            names.push_back(name);
            by_name[name] = &design;
            break;
        }
    }
    return sample;
}

}  // namespace

TEST_CASE("a sample of accepted random systems runs on the CM emulation to the reference result", "[random][systems][cm]") {
    // About 16 designs (compiling a CM harness takes seconds), spread over the run.
    const Run &run = fuzzer_run();
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("pulse_random_systems_cm_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    CmSample sample = sample_cm_designs(run, dir, true);
    const std::vector<std::string> &names = sample.names;
    const std::map<std::string, const Design *> &by_name = sample.by_name;
    const int refused = sample.refused, passed_over = sample.passed_over;
    std::string log;
    build_cm_emulations(dir, names, &log, true);
    int passed = 0;
    std::vector<std::string> reports;
    for (const std::string &n : names) {
        std::string out;
        if (!std::filesystem::exists(dir / (n + "_emu"))) out = "(the emulation did not build)";
        else run_command("'" + (dir / (n + "_emu")).string() + "' 0 5 2>&1", &out);
        if (out == "PASS\n") {
            passed++;
            continue;
        }
        // Shrunk against a build of its own, to the smallest design that still fails there.
        const Design &d = *by_name.at(n);
        const std::filesystem::path shrink_dir = dir / ("shrink_" + n);
        std::filesystem::create_directories(shrink_dir);
        Failure failure = check_cm(d.system, d.transform, shrink_dir);
        if (!failure.failed()) failure = {"CM emulation", out + log};
        reports.push_back(shrunk_report(d.system, d.transform, d.seed, failure, [&](const System &s, const Transform &t) {
            return check_cm(s, t, shrink_dir);
        }));
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    std::cout << "random systems: " << passed << " of " << names.size() << " sampled designs pass on the CM emulation ("
              << refused << " refused: over the CM register budget or by the kernel mapping; " << passed_over
              << " passed over for a smaller one, their CM source over 32 KiB)\n";
    for (const std::string &r : reports) std::cout << "disagreement: " << r << "\n";
    CHECK(reports.empty());
    if (!std::getenv("PULSE_FUZZ_SYSTEMS")) CHECK(names.size() >= 8);
}

// The same sample through Intel's compiler (tools/IntelCompile.h): each CM
// kernel compiles for one of kbl, tgllp, dg2 and pvc in turn (each device
// gets a quarter of the sample; Intel's compiler is this test's time).
// Hidden: ctest runs it under the label `intel` (test/CMakeLists.txt).
TEST_CASE("the CM sample of accepted random systems compiles with Intel's compiler", "[.intel]") {
    REQUIRE(missing_intel_tools(true).empty());
    const Run &run = fuzzer_run();
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("pulse_random_systems_intel_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const CmSample sample = sample_cm_designs(run, dir, false);
    int binaries = 0, spilled = 0;
    for (size_t k = 0; k < sample.names.size(); k++) {
        const std::string &n = sample.names[k];
        const std::string &device = intel_devices()[k % intel_devices().size()];
        for (const IntelBuild &b : compile_cm_for_intel((dir / (n + "_genx.cpp")).string(), {device})) {
            INFO(n << " on " << b.device << ":\n" << b.log);
            CHECK(b.compiled);
            CHECK(b.kernels == 1);
            binaries += b.compiled;
            spilled += b.spill_bytes > 0;
        }
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    std::cout << "random systems: " << sample.names.size() << " sampled CM kernels, " << binaries << " device binaries from Intel's compiler ("
              << spilled << " of them spill)\n";
    if (!std::getenv("PULSE_FUZZ_SYSTEMS")) CHECK(sample.names.size() >= 8);
}
