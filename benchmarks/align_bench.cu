// Times Pulse's align_sw_matrix (Smith-Waterman with affine gaps, a 24 x 24
// substitution matrix read as a table; the kernel in -I DIR,
// benchmarks/generate_align.sh) on one query against B database sequences of
// S residues, BLOSUM62, gap open 11 and extend 1, and a plain CUDA aligner (one
// thread per pair, its column of H and E in local memory) in the same run;
// checks that every best score agrees. Prints a line in words and
// `CSV,align,<Q>,<S>,<B>,<Pulse ms>,<Pulse GCUPS>,<peer ms>,<peer GCUPS>,<check>`
// (GCUPS: Q x S x B cells per nanosecond).
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -I<pulse>/runtime -I<pulse>/examples -IDIR DIR/align_sw_matrix.cu
//        benchmarks/align_bench.cu -o align_bench
// usage: align_bench Q S B (Q and S as the kernel was generated for)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "pulse_cuda.h"
#include "align_sw_matrix.h"
#include "align/blosum62.h"
#include "align_common.h"

/// The median of `reps` timed runs after one untimed (pulse_cuda.h's timer).
template <typename F> float median_ms(F f, int reps = 7) { return (float)pulse::cuda::time_median_ms(f, 1, reps); }

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: align_bench Q S B\n"); return 2; }
    const int Q = atoi(argv[1]), S = atoi(argv[2]);
    const long B = atol(argv[3]);
    if (Q > max_query) { fprintf(stderr, "Q at most %d\n", max_query); return 2; }
    int *query, *subject, *matrix, *best, *peer;
    cudaMalloc(&query, Q * 4); cudaMalloc(&subject, (size_t)S * B * 4); cudaMalloc(&matrix, 24 * 24 * 4);
    cudaMalloc(&best, B * 4); cudaMalloc(&peer, B * 4);
    residues<<<1024, 256>>>(query, Q, 1); residues<<<1024, 256>>>(subject, (long)S * B, 2);
    cudaMemcpy(matrix, pulse_blosum62, sizeof pulse_blosum62, cudaMemcpyHostToDevice);  // symmetric: either layout
    cudaMemset(best, 0xff, B * 4);
    pulse_buffer q = align_sw_matrix_query_buffer(query, B), d = align_sw_matrix_subject_buffer(subject, B),
                 m = align_sw_matrix_substitution_buffer(matrix, B), o = align_sw_matrix_Best_buffer(best, B);
    if (q.extent[0] != Q || d.extent[0] != S || d.extent[1] != B || o.extent[0] != B) { printf("layout mismatch: the kernel was generated for other sizes\n"); return 1; }
    PULSE_CUDA_CHECK(align_sw_matrix(q, d, m, o, 0));
    PULSE_CUDA_CHECK(cudaDeviceSynchronize());
    const float pulse_ms = median_ms([&] { align_sw_matrix(q, d, m, o, 0); });
    auto run_peer = [&] { align_one_thread_per_pair<<<(unsigned)((B + 127) / 128), 128>>>(query, Q, subject, S, nullptr, B, matrix, peer); };
    run_peer();
    PULSE_CUDA_CHECK(cudaDeviceSynchronize());
    const float peer_ms = median_ms(run_peer);
    std::vector<int> got(B), want(B);
    cudaMemcpy(got.data(), best, B * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(want.data(), peer, B * 4, cudaMemcpyDeviceToHost);
    long wrong = 0;
    for (long b = 0; b < B; b++) wrong += got[b] != want[b];
    const double cells = (double)Q * S * B;
    printf("align Q=%d S=%d B=%ld: Pulse %.3f ms (%.1f GCUPS), one thread per pair %.3f ms (%.1f GCUPS); %s (%ld of %ld scores differ)\n", Q, S, B,
           pulse_ms, cells / pulse_ms / 1e6, peer_ms, cells / peer_ms / 1e6, wrong ? "FAIL" : "PASS", wrong, B);
    printf("CSV,align,%d,%d,%ld,%.4f,%.1f,%.4f,%.1f,%s\n", Q, S, B, pulse_ms, cells / pulse_ms / 1e6, peer_ms, cells / peer_ms / 1e6, wrong ? "FAIL" : "PASS");
    return wrong ? 1 : 0;
}
