// Sequence alignment as a linear systolic array: one query against a batch of
// database sequences, the query's residues on the PEs (s = i), the subject's
// streaming through them along the anti-diagonals (t = i + j), each PE's H, E
// and F one step behind its neighbour's. The score of a pair is a reduction
// output: the best cell of the whole matrix (Smith-Waterman, local) or the
// last cell (Needleman-Wunsch, global, and edit distance) per database sequence.
// Residues are small integers; a match scores MATCH, a mismatch -MISMATCH, or
// a pair its entry of a substitution matrix (align_sw_matrix).
#include "pulse/pulse.h"

using namespace pulse;

namespace {

struct Sizes {
    int Q, S, B;
};

Sizes sizes(const Params &params) {
    return {params.get_int("Q", 24, 1, 8192),        // query residues (PEs)
            params.get_int("S", 13, 1, 1 << 16),     // residues of each database sequence
            params.get_int("B", 5, 1, 1 << 24)};     // database sequences (array instances)
}

/// Smith-Waterman with affine gaps (Gotoh): E runs along the subject, F along
/// the query, H is the best local score ending at (i, j); Best(b) is the best
/// H of the pair, at least 0. With `table`, a pair of residues scores its
/// entry of a substitution matrix (a table input of 24 x 24, as BLOSUM62 over
/// NCBI's alphabet ARNDCQEGHILKMFPSTWYVBZX*: residues are its indices) read
/// at the residues' values; else MATCH or -MISMATCH.
Spec smith_waterman(const Params &params, Type type, bool table) {
    const Sizes n = sizes(params);
    const int match = table ? 0 : params.get_int("MATCH", 2, 0, 100), mismatch = table ? 0 : params.get_int("MISMATCH", 3, 0, 100);
    const int open = params.get_int("OPEN", 11, 0, 1000), extend = params.get_int("EXTEND", 1, 0, 1000);
    Var i("i"), j("j"), b("b"), s("s"), t("t");
    Input query(type, 1, "query"), subject(type, 2, "subject"), substitution(type, {24, 24}, "substitution");
    Func H(type, {i, j, b}, Place::Device, "H"), E(type, {i, j, b}, Place::Device, "E"), F(type, {i, j, b}, Place::Device, "F");
    Func Best(Place::Device, "Best");
    // Outside the matrix: H is 0 and a gap cannot be extended (a score no path takes).
    const Expr none = cast(type, -(1 << 14));
    const Expr zero = cast(type, 0);
    Expr h_left = select(j > 0, H(i, j - 1, b), zero), h_up = select(i > 0, H(i - 1, j, b), zero);
    Expr h_diagonal = select(i > 0 && j > 0, H(i - 1, j - 1, b), zero);
    E(i, j, b) = max(select(j > 0, E(i, j - 1, b), none) - cast(type, extend), h_left - cast(type, open));
    F(i, j, b) = max(select(i > 0, F(i - 1, j, b), none) - cast(type, extend), h_up - cast(type, open));
    Expr score = table ? substitution(query(i), subject(j, b)) : select(query(i) == subject(j, b), cast(type, match), cast(type, -mismatch));
    H(i, j, b) = max(max(zero, h_diagonal + score), max(E(i, j, b), F(i, j, b)));
    Best(b) = zero;
    Best(b) = max(Best(b), H(i, j, b));
    // A narrow type's overflow, detected: while every H stays at most the
    // type's largest value less the largest score, no sum of the recurrences
    // leaves the type (H >= 0 and the gaps' terms stay above `none` - EXTEND);
    // a pair whose H passed it has Overflow(b) set, and its Best is to be
    // computed again in a wider type (the aligners' 32-bit fallback).
    Func Overflow(Place::Device, "Overflow");
    const bool narrow = type.bits() < 32 && !table;  // (a table's largest score is data: no narrow table spec)
    if (narrow) {
        const int64_t largest = (int64_t(1) << (type.bits() - 1)) - 1;
        Overflow(b) = cast(Bool(), 0);
        Overflow(b) = Overflow(b) || H(i, j, b) > cast(type, (int)(largest - match));
    }
    if (narrow) E.merge_ures(F, H, Best, Overflow);
    else E.merge_ures(F, H, Best);
    E.set_bounds(i, 0, n.Q, j, 0, n.S, b, 0, n.B);
    E.gpu_blocks(b);
    E.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    // A query past a warp's 256 PEs (8 per lane) runs over the warps of a block.
    if (params.get_int("THREADS", n.Q > 256, 0, 1)) E.gpu_threads(s);
    if (table) return Spec{Best, {query, subject, substitution}};
    return Spec{Best, {query, subject}};
}

/// Needleman-Wunsch global alignment with affine gaps (Gotoh) scored by a 24
/// x 24 substitution matrix (a table input: BLOSUM62): H is the best score
/// of an alignment of the prefixes ending at (i, j); a gap of L residues
/// costs OPEN + (L - 1) EXTEND, so row and column -1 of the table are
/// H(-1, j) = -(OPEN + j EXTEND), H(i, -1) = -(OPEN + i EXTEND), H(-1, -1) = 0;
/// Score(b) is H at the last cell.
Spec needleman_wunsch(const Params &params) {
    const Sizes n = sizes(params);
    const int open = params.get_int("OPEN", 11, 0, 1000), extend = params.get_int("EXTEND", 1, 0, 1000);
    Var i("i"), j("j"), b("b"), s("s"), t("t");
    Input query(Int(32), 1, "query"), subject(Int(32), 2, "subject"), substitution(Int(32), {24, 24}, "substitution");
    Func H(Int(32), {i, j, b}, Place::Device, "H"), E(Int(32), {i, j, b}, Place::Device, "E"), F(Int(32), {i, j, b}, Place::Device, "F");
    Func Score(Place::Device, "Score");
    // A gap cannot be extended across the table's edge: a score no alignment reaches.
    const Expr none = -(1 << 28);
    auto edge = [&](const Expr &k) { return -(open + k * extend); };  // H(-1, k) and H(k, -1)
    Expr h_left = select(j > 0, H(i, j - 1, b), edge(i)), h_up = select(i > 0, H(i - 1, j, b), edge(j));
    Expr h_diagonal = select(i > 0 && j > 0, H(i - 1, j - 1, b), select(i == 0 && j == 0, 0, select(i == 0, edge(j - 1), edge(i - 1))));
    E(i, j, b) = max(select(j > 0, E(i, j - 1, b), none) - extend, h_left - open);
    F(i, j, b) = max(select(i > 0, F(i - 1, j, b), none) - extend, h_up - open);
    H(i, j, b) = max(h_diagonal + substitution(query(i), subject(j, b)), max(E(i, j, b), F(i, j, b)));
    Score(b) = select(i == n.Q - 1 && j == n.S - 1, H(i, j, b));
    E.merge_ures(F, H, Score).set_bounds(i, 0, n.Q, j, 0, n.S, b, 0, n.B);
    E.gpu_blocks(b);
    E.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    if (params.get_int("THREADS", n.Q > 256, 0, 1)) E.gpu_threads(s);
    return Spec{Score, {query, subject, substitution}};
}

/// Edit distance (Levenshtein) between the query and each database sequence:
/// D(i, j) is the distance between their prefixes of lengths i + 1 and j + 1;
/// Dist(b) is D at the last cell, and Worst(b) the largest D of the matrix (a
/// max reduction beside a plain output).
Spec edit_distance(const Params &params) {
    const Sizes n = sizes(params);
    Var i("i"), j("j"), b("b"), s("s"), t("t");
    Input query(Int(32), 1, "query"), subject(Int(32), 2, "subject");
    Func D(Int(32), {i, j, b}, Place::Device, "D"), Dist(Place::Device, "Dist"), Worst(Place::Device, "Worst");
    // Row and column -1 of the textbook table: D(-1, j) = j + 1, D(i, -1) = i + 1, D(-1, -1) = 0.
    Expr left = select(j > 0, D(i, j - 1, b), i + 1), up = select(i > 0, D(i - 1, j, b), j + 1);
    Expr diagonal = select(i > 0 && j > 0, D(i - 1, j - 1, b), select(i > 0, i, j));
    D(i, j, b) = min(min(left, up) + 1, diagonal + select(query(i) == subject(j, b), 0, 1));
    Dist(b) = select(i == n.Q - 1 && j == n.S - 1, D(i, j, b));
    Worst(b) = 0;
    Worst(b) = max(Worst(b), D(i, j, b));
    D.merge_ures(Dist, Worst).set_bounds(i, 0, n.Q, j, 0, n.S, b, 0, n.B);
    D.gpu_blocks(b);
    D.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    if (params.get_int("THREADS", n.Q > 256, 0, 1)) D.gpu_threads(s);
    return Spec{Dist, {query, subject}};
}

}  // namespace

PULSE_REGISTER_SPEC("align_sw", "Smith-Waterman local alignment with affine gaps, best score per database sequence (s = i, t = i + j), int32",
                    [](const Params &p) { return smith_waterman(p, Int(32), false); });
PULSE_REGISTER_SPEC("align_sw_i16", "Smith-Waterman local alignment with affine gaps, best score per database sequence, int16",
                    [](const Params &p) { return smith_waterman(p, Int(16), false); });
PULSE_REGISTER_SPEC("align_sw_matrix", "Smith-Waterman with affine gaps, scored by a 24 x 24 substitution matrix (a table input: BLOSUM62), int32",
                    [](const Params &p) { return smith_waterman(p, Int(32), true); });
PULSE_REGISTER_SPEC("align_nw", "Needleman-Wunsch global alignment with affine gaps, scored by a 24 x 24 substitution matrix (BLOSUM62), "
                    "the score of the whole of both sequences per database sequence, int32",
                    needleman_wunsch);
PULSE_REGISTER_SPEC("align_edit_distance", "edit distance per database sequence, and its table's largest entry (s = i, t = i + j)",
                    edit_distance);

namespace {

/// Smith-Waterman as align_sw_matrix, the query split into blocks of K
/// residues: residue i = K * io + ii on lane io, register slot ii (a 2-D
/// array, s1 = io on the lanes, s2 = ii on the slots), the subject streaming
/// along t = io + j. A lane computes its K cells of one subject residue in
/// one step, each from the one below it in the same step (a chain along the
/// slots, in registers), so the wavefront crosses Q / K lanes, not Q PEs:
/// Q / K + S - 1 steps where the linear array (s = i, t = i + j) takes Q + S - 1.
/// How a blocked aligner's batch is given: database sequences of one length
/// (a box), of lengths read from an input (ragged), or one segment of a long
/// query (a pass: the row above its first residue read from the inputs,
/// its last row written out for the next pass), or a segment of a long query
/// against a ragged batch (its rows written up to each sequence's length).
enum class Batch { Box, Ragged, Segment, RaggedSegment };

/// With `type` narrower than 32 bits, H, E, F and Best are computed in it and
/// Overflow(b) flags a pair whose score may have left it (as
/// smith_waterman's); `packed` runs two database sequences a warp, their
/// values packed in the lanes of vectors (vectorize: int16 pairs in 32-bit
/// registers, with sm_90's DPX maxima).
/// With `profile`, the scores come from a query profile instead of the
/// matrix and the query: an input profile(i, r), Q x 24, the score of query
/// residue i against residue r (the host computes it once per query), so a
/// cell reads one entry at (i, subject(j, b)), the K entries of a lane's
/// residues one run of memory.
Spec smith_waterman_blocked(const Params &params, Batch batch, Type type = Int(32), bool packed = false, bool profile = false) {
    const bool ragged = batch == Batch::Ragged || batch == Batch::RaggedSegment;
    const bool segment = batch == Batch::Segment || batch == Batch::RaggedSegment;
    const int K = params.get_int("K", 8, 1, 64);  // query residues per lane
    const int Q = params.get_int("Q", 24, 1, 64 * 32), S = params.get_int("S", 13, 1, 1 << 16), B = params.get_int("B", 5, 1, 1 << 24);
    const int open = params.get_int("OPEN", 11, 0, 1000), extend = params.get_int("EXTEND", 1, 0, 1000);
    // SATURATE=1 (narrow types): the diagonal's sum saturates at the type's
    // largest value instead of wrapping, and a pair is flagged only where an
    // H reached it (int16: scores to 32766 exact, not 32640).
    const bool saturate = params.get_int("SATURATE", 0, 0, 1);
    if (saturate && type.bits() >= 32) compile_error("SATURATE=1: the ", type, " aligner has no Overflow flag to saturate for; use an _i16 spec");
    const int lanes = (Q + K - 1) / K;
    Var ii("ii"), io("io"), j("j"), b("b"), s1("s1"), s2("s2"), t("t");
    Input query(Int(32), 1, "query"), subject(Int(32), 2, "subject"), substitution(Int(32), {24, 24}, "substitution");
    Input lengths(Int(32), 1, "lengths");
    Input query_profile(Int(32), {Q, 24}, "profile");
    // A segment's row above: H and F of the previous segment's last residue
    // (for the first segment, 0 and -16384: the values outside the matrix),
    // in the scores' type, as the previous pass wrote them.
    Input top_H(type, 2, "top_H"), top_F(type, 2, "top_F");
    Func H(type, {ii, io, j, b}, Place::Device, "H"), E(type, {ii, io, j, b}, Place::Device, "E"),
        F(type, {ii, io, j, b}, Place::Device, "F");
    Func Best(Place::Device, "Best"), Bottom_H(Place::Device, "Bottom_H"), Bottom_F(Place::Device, "Bottom_F");
    Func Overflow(Place::Device, "Overflow");
    const Expr none = cast(type, -(1 << 14)), zero = cast(type, 0);
    // The residue below (i - 1): the slot below on this lane, or the last slot
    // of the lane below, or below the first, `outside` (the row above, read
    // at j - dj, for a segment).
    auto below = [&](Func &f, const Expr &dj, const Expr &outside) {
        return select(ii > 0, f(ii - 1, io, j - dj, b), select(io > 0, f(ii + (K - 1), io - 1, j - dj, b), outside));
    };
    auto above = [&](Input &row, const Expr &dj, const Expr &outside) { return segment ? row(j - dj, b) : outside; };
    // E here holds the gap entering the next column: E(ii, j) is Gotoh's E
    // at column j + 1, the larger of the gap extended and a gap opened after
    // this cell's H. So H - OPEN is read at one point and step by E of this
    // cell and F of the residue above (Gotoh's E(j) = max(E(j - 1) - EXTEND,
    // H(j - 1) - OPEN) subtracts it a step later, from the carried H): one
    // instruction a cell less. Before the first column, Gotoh's E is
    // max(none - EXTEND, 0 - OPEN) (E and H outside the matrix).
    const Expr gap_extend = cast(type, extend), gap_open = cast(type, open);
    // A narrow segment's row is one uint32 a column: the H of the last residue
    // at the column before (high half), and the F entering the next
    // segment's first residue, max(F - EXTEND, H - OPEN) (low half): one
    // load a step at the first residue and one store at the last, not three
    // and two. (Unsigned, so that its halves are a shift and a cast.)
    const bool packed_row = segment && type.bits() <= 16;
    Input top_row(UInt(32), 2, "top");
    Expr h_up = below(H, 0, above(top_H, 0, zero));
    Expr h_diagonal = select(j > 0, below(H, 1, above(top_H, 1, zero)), zero);
    Expr e_in = select(j > 0, E(ii, io, j - 1, b), max(none - gap_extend, zero - gap_open));  // Gotoh's E(i, j)
    Expr f_value = max(below(F, 0, above(top_F, 0, none)) - gap_extend, h_up - gap_open);
    if (packed_row) {
        Expr first = ii == 0 && io == 0;
        h_diagonal = select(j > 0, select(first, cast(type, top_row(j, b) / cast(UInt(32), 65536)), below(H, 1, zero)), zero);
        f_value = select(first, cast(type, top_row(j, b)), max(below(F, 0, none) - gap_extend, below(H, 0, zero) - gap_open));
    }
    F(ii, io, j, b) = f_value;
    Expr score = cast(type, profile ? query_profile(io * K + ii, subject(j, b)) : substitution(query(io * K + ii), subject(j, b)));
    const Expr diagonal_sum = saturate ? saturating_add(h_diagonal, score) : h_diagonal + score;
    H(ii, io, j, b) = max(max(zero, diagonal_sum), max(e_in, F(ii, io, j, b)));
    E(ii, io, j, b) = max(e_in - gap_extend, H(ii, io, j, b) - gap_open);
    Best(b) = zero;
    Best(b) = max(Best(b), H(ii, io, j, b));
    const bool narrow = type.bits() < 32;
    if (narrow) {
        // While every H stays at most the type's largest value less 127, no
        // sum leaves the type for a table of entries in [-128, 127] (as
        // BLOSUM62's, in [-4, 11]); a pair whose H passed it is flagged, to
        // be computed again in 32 bits.
        const int largest = (1 << (type.bits() - 1)) - 1;
        Overflow(b) = cast(Bool(), 0);
        Overflow(b) = Overflow(b) || H(ii, io, j, b) > cast(type, saturate ? largest - 1 : largest - 127);
    }
    if (segment) {
        // The last residue's row, for the next segment (of a ragged batch:
        // up to the sequence's length; the rest of its column is not written).
        if (packed_row) {
            // (h's 16 bits * 65536 + f's 16 bits: h = int16(row / 65536), f = int16(row).)
            Func Bottom(Place::Device, "Bottom");
            Expr f_next = max(F(ii, io, j, b) - gap_extend, H(ii, io, j, b) - gap_open);
            Expr h_before = select(j > 0, H(ii, io, j - 1, b), zero);
            auto half = [](const Expr &v) { return cast(UInt(32), cast(UInt(16), v)); };
            Bottom(j, b) = select(io * K + ii == Q - 1, half(h_before) * cast(UInt(32), 65536) + half(f_next));
            F.merge_ures(H, E, Best, Overflow, Bottom);
        } else {
            Bottom_H(j, b) = select(io * K + ii == Q - 1, H(ii, io, j, b));
            Bottom_F(j, b) = select(io * K + ii == Q - 1, F(ii, io, j, b));
            if (narrow) F.merge_ures(H, E, Best, Overflow, Bottom_H, Bottom_F);
            else F.merge_ures(H, E, Best, Bottom_H, Bottom_F);
        }
    } else if (narrow) {
        F.merge_ures(H, E, Best, Overflow);
    } else {
        F.merge_ures(H, E, Best);
    }
    F.set_bounds(ii, 0, K, io, 0, lanes, j, 0, S, b, 0, B);
    if (lanes * K != Q) F.where(io * K + ii < Q);
    // A ragged batch: sequence b has lengths(b) residues (at most S; the
    // subject buffer is S x B, each column padded): its instance stops there.
    if (ragged) F.where(j < lengths(b));
    F.gpu_blocks(b);
    F.space_time_transform({ii, io, j}, {s1, s2, t}, {0, 1, 0, /**/ 1, 0, 0, /**/ 0, 1, 1});
    if (packed && params.get_int("VECTORIZE", 1, 0, 1)) F.vectorize(b, 2);
    // The scores' table staged once per block in shared memory (the
    // profile laid out so that a warp's reads of one slot hit 32 banks);
    // SHARED=0 reads it through L1, as the CM backend, which has no shared
    // memory, must.
    if (params.get_int("SHARED", 1, 0, 1)) (profile ? query_profile : substitution).in(E).store_in(MemoryType::Shared);
    // The inputs: the scoring, the lengths of a ragged batch, a segment's row above.
    std::vector<Input> inputs = profile ? std::vector<Input>{query_profile, subject} : std::vector<Input>{query, subject, substitution};
    if (ragged) inputs.push_back(lengths);
    if (packed_row) inputs.push_back(top_row);
    else if (segment) inputs.insert(inputs.end(), {top_H, top_F});
    return Spec{Best, inputs};
}

}  // namespace

PULSE_REGISTER_SPEC("align_sw_blocked", "Smith-Waterman with affine gaps and a 24 x 24 substitution matrix, K query residues per lane "
                    "computed in one step (a 2-D array: the wavefront crosses the lanes, not the residues), int32",
                    [](const Params &p) { return smith_waterman_blocked(p, Batch::Box); });
PULSE_REGISTER_SPEC("align_sw_ragged", "Smith-Waterman as align_sw_blocked over a ragged batch: database sequence b has lengths(b) "
                    "residues (at most S), and its array instance runs only its own steps",
                    [](const Params &p) { return smith_waterman_blocked(p, Batch::Ragged); });
PULSE_REGISTER_SPEC("align_sw_segment", "one pass of Smith-Waterman as align_sw_blocked over a segment of a long query: the row above "
                    "its first residue read from top_H and top_F, its last residue's row written to Bottom_H and Bottom_F for the "
                    "next pass (the score of the pair is the largest Best over the passes)",
                    [](const Params &p) { return smith_waterman_blocked(p, Batch::Segment); });
PULSE_REGISTER_SPEC("align_sw_blocked_i16", "Smith-Waterman as align_sw_blocked in int16, two database sequences a warp packed in the "
                    "lanes of 32-bit registers (vectorize: SIMD and DPX instructions; VECTORIZE=0 for one a warp), Overflow(b) "
                    "flagging a pair to compute again in 32 bits",
                    [](const Params &p) { return smith_waterman_blocked(p, Batch::Box, Int(16), true); });
PULSE_REGISTER_SPEC("align_sw_ragged_i16", "Smith-Waterman as align_sw_ragged in int16, two database sequences a warp packed in the "
                    "lanes of 32-bit registers (each masked to its own length), Overflow(b) flagging a pair to compute again in 32 bits",
                    [](const Params &p) { return smith_waterman_blocked(p, Batch::Ragged, Int(16), true); });
PULSE_REGISTER_SPEC("align_sw_ragged_profile_i16", "Smith-Waterman as align_sw_ragged_profile in int16, two database sequences a warp "
                    "packed in the lanes of 32-bit registers (each masked to its own length, each reading its own profile entries), "
                    "Overflow(b) flagging a pair to compute again in 32 bits",
                    [](const Params &p) { return smith_waterman_blocked(p, Batch::Ragged, Int(16), true, true); });
PULSE_REGISTER_SPEC("align_sw_ragged_segment_profile_i16", "one pass of Smith-Waterman as align_sw_ragged_profile_i16 over a "
                    "segment of a long query: the row above its first residue read from top, its last residue's row written to "
                    "Bottom up to each database sequence's length, for the next pass (a uint32 a column: the 16 bits of H at the "
                    "column before times 65536, plus the 16 bits of the F entering the next segment; above the first pass 49152, "
                    "H 0 and F -16384; the pair's score is the largest Best over the passes, flagged if any pass flags it)",
                    [](const Params &p) { return smith_waterman_blocked(p, Batch::RaggedSegment, Int(16), true, true); });
PULSE_REGISTER_SPEC("align_sw_ragged_segment_profile", "one pass of Smith-Waterman as align_sw_ragged_profile over a segment of a "
                    "long query, its rows as align_sw_ragged_segment_profile_i16's, int32",
                    [](const Params &p) { return smith_waterman_blocked(p, Batch::RaggedSegment, Int(32), false, true); });
PULSE_REGISTER_SPEC("align_sw_ragged_profile", "Smith-Waterman as align_sw_ragged, scored from a query profile: profile(i, r), Q x 24, "
                    "the score of query residue i against residue r, read at (i, subject(j, b))",
                    [](const Params &p) { return smith_waterman_blocked(p, Batch::Ragged, Int(32), false, true); });
