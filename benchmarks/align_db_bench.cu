// Times Pulse's align_sw_ragged kernels (benchmarks/generate_align_db.sh: one
// per length class, -I DIR) on one query against a generated protein-like
// database: N sequences (default 2^20) whose lengths are drawn log-normal
// with median 300 (sigma 0.75, at least 8 residues), the 64 longest of them
// spread over [10000, 16384] (the long tail). Sequences are sorted by length,
// longest first, and split into the length classes (a class's subject buffer
// padded to its bound S; each instance stops at its own length). The peer, in
// the same run: a plain CUDA aligner, one thread per pair, over the same
// classes and lengths. Every best score is compared. With kernels of
// align_sw_ragged_i16 (kernels.h defines ALIGN_DB_NARROW) the scores are
// int16 with an Overflow flag per pair (a flagged pair's score is the 32-bit
// fallback's: below). With kernels of
// align_sw_ragged_segment_profile_i16 (kernels.h defines ALIGN_DB_SEGMENT L)
// the query runs in Q / L passes, each class's rows through global memory:
// pass p reads profile rows [pL, pL + L) and the row the pass before wrote
// (the first pass a row outside the matrix, set once per database), and
// writes its own Best and Overflow; a pair's score is the largest Best of its
// passes, flagged if any pass flagged it (combined on the host after the
// timed passes: P int16 a pair).
// GCUPS: query length x total database residues per nanosecond.
// Prints a line per class and
// `CSV,align_db,<Q>,<N>,<residues>,<longest>,<Pulse ms>,<Pulse GCUPS>,<peer ms>,<peer GCUPS>,<check>`.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -I<pulse>/runtime -I<pulse>/examples -IDIR DIR/align_db_*.cu
//        benchmarks/align_db_bench.cu -o align_db_bench   (DIR/align_db_*_check.cu left out)
// usage: align_db_bench [N [Q]]   (Q: another query length, for the segment
//        kernels only: a multiple of ALIGN_DB_SEGMENT)
// With ALIGN_DB_FALLBACK (the int16 kernels scored from a profile) the pairs
// flagged past int16 are computed again in int32 by align_db_fallback (the
// 32-bit fallback, after the timed runs) and compared too. The random
// database flags none: a local score is at most 11 Q (BLOSUM62's largest
// entry for each query residue), below the flag's 32641 up to Q = 2967.
// environment: ALIGN_DB_CHECK_ONLY=1 runs the database once through Pulse and
//        once through the peer and compares, without timing (for
//        compute-sanitizer, where each timed repetition costs minutes).
//        ALIGN_DB_HIGH_SCORES=1 makes the query all tryptophan (W, 11 against
//        itself) and so every sequence of 3000 residues or more: at Q = 4096
//        their scores pass int16, and the fallback computes them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "pulse_cuda.h"
#include "pulse_buffer.h"

#include "kernels.h"
#if defined(ALIGN_DB_SEGMENT) && !(defined(ALIGN_DB_NARROW) && defined(ALIGN_DB_PROFILE))
#error "ALIGN_DB_SEGMENT: the segment kernels are align_sw_ragged_segment_profile_i16's (int16, scored from a profile)"
#endif
#ifdef ALIGN_DB_NARROW
typedef int16_t Score;
#define ALIGN_DB_OUTPUTS pulse_buffer, pulse_buffer
#else
typedef int Score;
#define ALIGN_DB_OUTPUTS pulse_buffer
#endif
struct AlignDbKernel {
    int S;  ///< the class's bound: its sequences have at most S residues
#if defined(ALIGN_DB_SEGMENT)
    // One pass: profile, subject, lengths, the row above; Best, Overflow, the last row (a uint32 a
    // column: H's 16 bits at the column before times 65536 plus those of the F entering the next pass).
    cudaError_t (*run)(pulse_buffer, pulse_buffer, pulse_buffer, pulse_buffer, ALIGN_DB_OUTPUTS, pulse_buffer, cudaStream_t);
    pulse_buffer (*profile)(const void *, int64_t);
    pulse_buffer (*subject)(const void *, int64_t);
#elif defined(ALIGN_DB_PROFILE)
    // Scored from a query profile (Q x 24: profile(i, r) = BLOSUM62(query(i), r)).
    cudaError_t (*run)(pulse_buffer, pulse_buffer, pulse_buffer, ALIGN_DB_OUTPUTS, cudaStream_t);
    pulse_buffer (*profile)(const void *, int64_t);
    pulse_buffer (*subject)(const void *, int64_t);
#else
    cudaError_t (*run)(pulse_buffer, pulse_buffer, pulse_buffer, pulse_buffer, ALIGN_DB_OUTPUTS, cudaStream_t);
    pulse_buffer (*query)(const void *, int64_t);
    pulse_buffer (*subject)(const void *, int64_t);
    pulse_buffer (*substitution)(const void *, int64_t);
#endif
    pulse_buffer (*lengths)(const void *, int64_t);
    pulse_buffer (*best)(void *, int64_t);
#ifdef ALIGN_DB_NARROW
    pulse_buffer (*overflow)(void *, int64_t);
#endif
#ifdef ALIGN_DB_SEGMENT
    pulse_buffer (*top)(const void *, int64_t);
    pulse_buffer (*bottom)(void *, int64_t);
#endif
};
#ifdef ALIGN_DB_SEGMENT
constexpr int align_db_passes_of(int Q) { return Q / ALIGN_DB_SEGMENT; }
/// The row above the first pass: H 0 and F -16384 (outside the matrix), 0 * 65536 + 49152.
constexpr uint32_t outside_row = 0 * 65536 + (uint16_t)-16384;
#else
constexpr int align_db_passes_of(int) { return 1; }
#endif
#ifdef ALIGN_DB_FALLBACK
/// The 32-bit fallback: one int32 pass of align_sw_ragged_segment_profile over L residues, at the bound S.
struct AlignDbFallback {
    int S;
    // profile, subject, lengths, the row above (H, F); Best, the last row (H, F).
    cudaError_t (*run)(pulse_buffer, pulse_buffer, pulse_buffer, pulse_buffer, pulse_buffer, pulse_buffer, pulse_buffer, pulse_buffer,
                       cudaStream_t);
    pulse_buffer (*profile)(const void *, int64_t);
    pulse_buffer (*subject)(const void *, int64_t);
    pulse_buffer (*lengths)(const void *, int64_t);
    pulse_buffer (*top_h)(const void *, int64_t);
    pulse_buffer (*top_f)(const void *, int64_t);
    pulse_buffer (*best)(void *, int64_t);
    pulse_buffer (*bottom_h)(void *, int64_t);
    pulse_buffer (*bottom_f)(void *, int64_t);
};
#endif
template<typename T>
__global__ void fill(T *p, size_t n, T value) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = value;
}
#define ALIGN_DB_TABLE
#include "kernels.h"
#include "align/blosum62.h"
#include "align_common.h"

struct LengthClass {
    const AlignDbKernel *kernel;
    long count = 0, first = 0;  ///< its sequences: [first, first + count) of the sorted database
    int *subject = nullptr, *lengths = nullptr, *peer = nullptr;
    Score *best = nullptr;  ///< per pass: count a pass
    bool *overflow = nullptr;
    uint32_t *rows[3] = {};  ///< the row above the first pass, and the passes' rows in turn
    double residues = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
};

int main(int argc, char **argv) {
    const long N = argc > 1 ? atol(argv[1]) : 1L << 20;
    const int Q = argc > 2 ? atoi(argv[2]) : align_db_query, classes = (int)(sizeof align_db_kernels / sizeof align_db_kernels[0]);
    const int passes = align_db_passes_of(Q);
    const bool check_only = getenv("ALIGN_DB_CHECK_ONLY") && atoi(getenv("ALIGN_DB_CHECK_ONLY")) != 0;
    const bool high_scores = getenv("ALIGN_DB_HIGH_SCORES") && atoi(getenv("ALIGN_DB_HIGH_SCORES")) != 0;
    const int tryptophan = 17, high_score_length = 3000;  // W in pulse_blosum62_alphabet
#ifdef ALIGN_DB_SEGMENT
    const int kernel_residues = ALIGN_DB_SEGMENT;  // of the query, in one kernel
#else
    const int kernel_residues = align_db_query;
#endif
    if (Q < 1 || Q != passes * kernel_residues) {
        fprintf(stderr, "query length %d: these kernels run %d residues %s\n", Q, kernel_residues,
                kernel_residues != align_db_query || passes > 1 ? "a pass (a query length must be a multiple)"
                                                                : "(another length needs its own kernels)");
        return 2;
    }
    const int longest_class = align_db_kernels[classes - 1].S;
    // Protein-like lengths, longest first.
    std::mt19937 rng(2024);
    std::lognormal_distribution<double> draw(std::log(300.0), 0.75);
    std::vector<int> length(N);
    for (long b = 0; b < N; b++) length[b] = std::clamp((int)std::lround(draw(rng)), 8, longest_class);
    for (long b = 0; b < std::min(N, 64L); b++) length[b] = 10000 + (int)(rng() % (longest_class - 10000 + 1));
    std::sort(length.begin(), length.end(), std::greater<int>());
    int *query, *matrix;
    cudaMalloc(&query, Q * 4);
    cudaMalloc(&matrix, 24 * 24 * 4);
    residues<<<64, 256>>>(query, Q, 1);
    if (high_scores) fill<<<64, 256>>>(query, Q, tryptophan);
    cudaMemcpy(matrix, pulse_blosum62, sizeof pulse_blosum62, cudaMemcpyHostToDevice);  // symmetric: either layout
#ifdef ALIGN_DB_PROFILE
    // The query profile, once per query: element i + Q r is the score of query residue i against residue r.
    // A pass's profile: its L = Q / passes rows of the query's.
    const int L = Q / passes;
    std::vector<int *> profile(passes);
    {
        std::vector<int> q(Q), rows(L * 24);
        cudaMemcpy(q.data(), query, Q * 4, cudaMemcpyDeviceToHost);
        for (int pass = 0; pass < passes; pass++) {
            for (int r = 0; r < 24; r++)
                for (int i = 0; i < L; i++) rows[i + L * r] = pulse_blosum62[q[pass * L + i]][r];
            cudaMalloc(&profile[pass], L * 24 * 4);
            cudaMemcpy(profile[pass], rows.data(), L * 24 * 4, cudaMemcpyHostToDevice);
        }
    }
#endif
    // The classes: each sequence in the smallest that holds it (the
    // shortest are last: each class is a run of the sorted lengths).
    std::vector<LengthClass> parts;
    double total_residues = 0, padded = 0;
    long end = N;
    for (int c = 0; c < classes; c++) {
        long begin = end;
        while (begin > 0 && length[begin - 1] <= align_db_kernels[c].S) begin--;
        if (begin == end) continue;
        LengthClass part;
        part.kernel = &align_db_kernels[c];
        part.count = end - begin;
        part.first = begin;
        const long S = part.kernel->S;
        PULSE_CUDA_CHECK(cudaMalloc(&part.subject, (size_t)S * part.count * 4));
        PULSE_CUDA_CHECK(cudaMalloc(&part.lengths, part.count * 4));
        PULSE_CUDA_CHECK(cudaMalloc(&part.best, passes * part.count * sizeof(Score)));
        PULSE_CUDA_CHECK(cudaMalloc(&part.overflow, passes * part.count));
#ifdef ALIGN_DB_SEGMENT
        for (uint32_t *&row : part.rows) PULSE_CUDA_CHECK(cudaMalloc(&row, (size_t)S * part.count * 4));
        fill<<<1024, 256>>>(part.rows[0], (size_t)S * part.count, outside_row);
#endif
        PULSE_CUDA_CHECK(cudaMalloc(&part.peer, part.count * 4));
        residues<<<1024, 256>>>(part.subject, S * part.count, 2 + c);
        for (long b = begin; high_scores && b < end && length[b] >= high_score_length; b++)  // (longest first)
            fill<<<16, 256>>>(part.subject + (b - begin) * S, length[b], tryptophan);
        cudaMemcpy(part.lengths, length.data() + begin, part.count * 4, cudaMemcpyHostToDevice);
        cudaMemset(part.best, 0xff, passes * part.count * sizeof(Score));
        cudaMemset(part.overflow, 0xff, passes * part.count);
        for (long b = begin; b < end; b++) part.residues += length[b];
        total_residues += part.residues;
        padded += (double)S * part.count;
        PULSE_CUDA_CHECK(cudaStreamCreateWithFlags(&part.stream, cudaStreamNonBlocking));
        PULSE_CUDA_CHECK(cudaEventCreateWithFlags(&part.done, cudaEventDisableTiming));
        parts.push_back(part);
        end = begin;
    }
    if (end != 0) { fprintf(stderr, "a sequence is longer than the longest class\n"); return 2; }
    auto run_pulse = [&](const LengthClass &p) {
        const AlignDbKernel &k = *p.kernel;
#ifdef ALIGN_DB_SEGMENT
        // Pass i reads the rows pass i - 1 wrote (rows[1] and rows[2] in turn).
        for (int pass = 0; pass < passes; pass++) {
            const uint32_t *above = p.rows[pass == 0 ? 0 : 1 + (pass - 1) % 2];
            uint32_t *below = p.rows[1 + pass % 2];
            const cudaError_t e = k.run(k.profile(profile[pass], p.count), k.subject(p.subject, p.count), k.lengths(p.lengths, p.count),
                                        k.top(above, p.count), k.best(p.best + pass * p.count, p.count),
                                        k.overflow(p.overflow + pass * p.count, p.count), k.bottom(below, p.count), p.stream);
            if (e != cudaSuccess) return e;
        }
        return cudaSuccess;
#else
        return k.run(
#ifdef ALIGN_DB_PROFILE
                     k.profile(profile[0], p.count), k.subject(p.subject, p.count),
#else
                     k.query(query, p.count), k.subject(p.subject, p.count), k.substitution(matrix, p.count),
#endif
                     k.lengths(p.lengths, p.count),
                     k.best(p.best, p.count),
#ifdef ALIGN_DB_NARROW
                     k.overflow(p.overflow, p.count),
#endif
                     p.stream);
#endif
    };
    auto run_peer = [&](const LengthClass &p) {
        align_one_thread_per_pair<<<(unsigned)((p.count + 127) / 128), 128, 0, p.stream>>>(query, Q, p.subject, p.kernel->S, p.lengths, p.count,
                                                                                          matrix, p.peer);
    };
    // The whole database: each class on a stream of its own, the longest
    // first (its few long sequences overlap the rest), joined on stream 0.
    cudaEvent_t fork;
    cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
    auto all = [&](auto run) {
        cudaEventRecord(fork, 0);
        for (auto p = parts.rbegin(); p != parts.rend(); ++p) {
            cudaStreamWaitEvent(p->stream, fork, 0);
            run(*p);
            cudaEventRecord(p->done, p->stream);
        }
        for (const LengthClass &p : parts) cudaStreamWaitEvent(0, p.done, 0);
    };
    all([&](const LengthClass &p) { PULSE_CUDA_CHECK(run_pulse(p)); });
    PULSE_CUDA_CHECK(cudaDeviceSynchronize());
    printf("align_db Q=%d: %ld sequences, %.0f residues (longest %d, %.2fx padded in their classes)", Q, N, total_residues, length[0],
           padded / total_residues);
    if (passes > 1) printf(", in %d passes of %d residues", passes, Q / passes);
    printf("\n");
    float pulse_ms = 0, peer_ms = 0;
    if (check_only) {
        all(run_peer);
    } else {
        for (const LengthClass &p : parts) {
            const float ms = (float)pulse::cuda::time_median_ms([&] { run_pulse(p); }, 1, 5, p.stream);
            printf("  class S<=%5d: %8ld sequences, %11.0f residues: Pulse %9.3f ms (%7.1f GCUPS)\n", p.kernel->S, p.count, p.residues, ms,
                   Q * p.residues / ms / 1e6);
        }
        pulse_ms = (float)pulse::cuda::time_median_ms([&] { all(run_pulse); }, 1, 5);
        peer_ms = (float)pulse::cuda::time_median_ms([&] { all(run_peer); }, 1, 3);
    }
    PULSE_CUDA_CHECK(cudaDeviceSynchronize());
#ifdef ALIGN_DB_FALLBACK
    // The 32-bit fallback for the pairs of class p flagged past int16: their sequences gathered into a
    // batch at the fallback's bound, run in the same passes with rows of H and F through memory; a
    // pair's score is the largest Best of its passes.
    auto in_int32 = [&](const LengthClass &p, const std::vector<long> &pairs) {
        const AlignDbFallback &f = align_db_fallback_kernel;
        const long n = (long)pairs.size();
        const size_t cells = (size_t)f.S * n;
        int *subject, *lengths, *best, *rows[6];  // the row above the first pass (H, F), then two pairs in turn
        PULSE_CUDA_CHECK(cudaMalloc(&subject, cells * 4));
        PULSE_CUDA_CHECK(cudaMalloc(&lengths, n * 4));
        PULSE_CUDA_CHECK(cudaMalloc(&best, passes * n * 4));
        for (int *&row : rows) PULSE_CUDA_CHECK(cudaMalloc(&row, cells * 4));
        cudaMemset(subject, 0, cells * 4);
        std::vector<int> pair_length(n), score(n, 0), pass_best(passes * n);
        for (long k = 0; k < n; k++) {
            pair_length[k] = length[p.first + pairs[k]];
            cudaMemcpy(subject + k * f.S, p.subject + pairs[k] * p.kernel->S, pair_length[k] * 4, cudaMemcpyDeviceToDevice);
        }
        cudaMemcpy(lengths, pair_length.data(), n * 4, cudaMemcpyHostToDevice);
        fill<<<256, 256>>>(rows[0], cells, 0);
        fill<<<256, 256>>>(rows[1], cells, -16384);  // outside the matrix: H 0, F -16384
        for (int pass = 0; pass < passes; pass++) {
            int **above = pass == 0 ? rows : rows + 2 + 2 * ((pass - 1) % 2), **below = rows + 2 + 2 * (pass % 2);
            PULSE_CUDA_CHECK(f.run(f.profile(profile[pass], n), f.subject(subject, n), f.lengths(lengths, n), f.top_h(above[0], n),
                                   f.top_f(above[1], n), f.best(best + pass * n, n), f.bottom_h(below[0], n), f.bottom_f(below[1], n), 0));
        }
        PULSE_CUDA_CHECK(cudaMemcpy(pass_best.data(), best, passes * n * 4, cudaMemcpyDeviceToHost));
        for (long k = 0; k < n; k++)
            for (int pass = 0; pass < passes; pass++) score[k] = std::max(score[k], pass_best[pass * n + k]);
        for (int *buffer : {subject, lengths, best}) cudaFree(buffer);
        for (int *row : rows) cudaFree(row);
        return score;
    };
#endif
    long wrong = 0, flagged = 0, recomputed = 0;
    for (const LengthClass &p : parts) {
        std::vector<int> got(p.count);
        std::vector<Score> pass_best(passes * p.count);
        std::vector<int> want(p.count);
        std::vector<unsigned char> overflowed(p.count, 0), pass_overflow(passes * p.count, 0);
        cudaMemcpy(pass_best.data(), p.best, passes * p.count * sizeof(Score), cudaMemcpyDeviceToHost);
        cudaMemcpy(want.data(), p.peer, p.count * 4, cudaMemcpyDeviceToHost);
#ifdef ALIGN_DB_NARROW
        cudaMemcpy(pass_overflow.data(), p.overflow, passes * p.count, cudaMemcpyDeviceToHost);
#endif
        // The pair's score: the largest of its passes'; flagged if any pass is (a flag is 0 or 1).
        for (long b = 0; b < p.count; b++) {
            got[b] = pass_best[b];
            overflowed[b] = pass_overflow[b];
            for (int pass = 1; pass < passes; pass++) {
                got[b] = std::max(got[b], (int)pass_best[pass * p.count + b]);
                overflowed[b] = overflowed[b] > 1 || pass_overflow[pass * p.count + b] > 1 ? 2 : overflowed[b] | pass_overflow[pass * p.count + b];
            }
        }
#ifdef ALIGN_DB_FALLBACK
        std::vector<long> redo;
        for (long b = 0; b < p.count; b++)
            if (overflowed[b] == 1) redo.push_back(b);
        if (!redo.empty()) {
            const std::vector<int> score = in_int32(p, redo);
            for (size_t k = 0; k < redo.size(); k++) got[redo[k]] = score[k], overflowed[redo[k]] = 0;  // exact now: compared
            recomputed += (long)redo.size();
        }
#endif
        for (long b = 0; b < p.count; b++) {
            // A flag is a bool (0 or 1); a pair not flagged has the exact score.
            const bool bad = overflowed[b] > 1 || (!overflowed[b] && got[b] != want[b]);
            if (bad && wrong < 10) {
                const long other = b ^ 1;  // (the other instance of its warp, where packed)
                printf("  wrong: class S<=%d, sequence %ld of %ld (length %d): %d, want %d, overflow flag %d; sequence %ld: length %d, %d, want %d\n",
                       p.kernel->S, b, p.count, length[p.first + b], (int)got[b], want[b], (int)overflowed[b], other,
                       other < p.count ? length[p.first + other] : -1, other < p.count ? (int)got[other] : -1, other < p.count ? want[other] : -1);
            }
            wrong += bad;
            flagged += !bad && overflowed[b];
        }
    }
    if (recomputed) printf("align_db Q=%d: %ld pairs flagged past int16, computed again in int32 (align_db_fallback, not timed) and compared\n", Q, recomputed);
    if (flagged) printf("align_db Q=%d: %ld pairs flagged as past int16 (their scores the 32-bit fallback's, not generated here)\n", Q, flagged);
    const double cells = (double)Q * total_residues;
    if (check_only) {
        printf("align_db Q=%d N=%ld, checked once (not timed): %s (%ld of %ld scores differ)\n", Q, N, wrong ? "FAIL" : "PASS", wrong, N);
        return wrong ? 1 : 0;
    }
    printf("align_db Q=%d N=%ld: Pulse %.3f ms (%.1f GCUPS), one thread per pair %.3f ms (%.1f GCUPS); %s (%ld of %ld scores differ)\n", Q, N,
           pulse_ms, cells / pulse_ms / 1e6, peer_ms, cells / peer_ms / 1e6, wrong ? "FAIL" : "PASS", wrong, N);
    printf("CSV,align_db,%d,%ld,%.0f,%d,%.4f,%.1f,%.4f,%.1f,%s\n", Q, N, total_residues, length[0], pulse_ms, cells / pulse_ms / 1e6, peer_ms,
           cells / peer_ms / 1e6, wrong ? "FAIL" : "PASS");
    return wrong ? 1 : 0;
}
