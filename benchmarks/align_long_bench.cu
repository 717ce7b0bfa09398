// Times Pulse's align_sw_segment (one pass of the blocked Smith-Waterman over
// a segment of L query residues; the kernel in -I DIR, named align_segment,
// benchmarks/generate_align_long.sh) on a long query of Q = P x L residues in
// P passes, each pass's last row (H and F) the next one's row above, through
// global memory, against B database sequences of S residues (BLOSUM62, gap
// open 11, extend 1); the peer in the same run is a plain CUDA aligner, one
// thread per pair, on the whole query. Every best score is compared.
// Prints a line in words and
// `CSV,align_long,<Q>,<L>,<S>,<B>,<Pulse ms>,<Pulse GCUPS>,<peer ms>,<peer GCUPS>,<check>`.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -I<pulse>/runtime -I<pulse>/examples -IDIR DIR/align_segment.cu
//        benchmarks/align_long_bench.cu -o align_long_bench
// usage: align_long_bench Q L S B (L and S as the kernel was generated for; L divides Q)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "pulse_cuda.h"
#include "align_segment.h"
#include "align/blosum62.h"
#include "align_common.h"

// The pair's score: the largest of its passes' bests.
__global__ void keep_best(int *best, const int *pass, long B) {
    const long b = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (b < B) best[b] = max(best[b], pass[b]);
}

__global__ void fill(int *p, long n, int value) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) p[i] = value;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: align_long_bench Q L S B\n"); return 2; }
    const int Q = atoi(argv[1]), L = atoi(argv[2]), S = atoi(argv[3]);
    const long B = atol(argv[4]);
    if (Q > max_query || Q % L != 0) { fprintf(stderr, "Q at most %d, a multiple of L\n", max_query); return 2; }
    const int passes = Q / L;
    int *query, *subject, *matrix, *best, *pass_best, *peer, *rows[4];
    cudaMalloc(&query, Q * 4); cudaMalloc(&subject, (size_t)S * B * 4); cudaMalloc(&matrix, 24 * 24 * 4);
    cudaMalloc(&best, B * 4); cudaMalloc(&pass_best, B * 4); cudaMalloc(&peer, B * 4);
    for (int *&r : rows) cudaMalloc(&r, (size_t)S * B * 4);  // H and F: the row above, the row written
    residues<<<1024, 256>>>(query, Q, 1); residues<<<1024, 256>>>(subject, (long)S * B, 2);
    cudaMemcpy(matrix, pulse_blosum62, sizeof pulse_blosum62, cudaMemcpyHostToDevice);  // symmetric: either layout
    const pulse_buffer d = align_segment_subject_buffer(subject, B), m = align_segment_substitution_buffer(matrix, B);
    if (align_segment_query_buffer(query, B).extent[0] != L || d.extent[0] != S || d.extent[1] != B) {
        printf("layout mismatch: the kernel was generated for other sizes\n");
        return 1;
    }
    auto run = [&] {
        // Above the first segment: H = 0 and F = -16384, outside the matrix.
        fill<<<1024, 256>>>(rows[0], (long)S * B, 0);
        fill<<<1024, 256>>>(rows[1], (long)S * B, -(1 << 14));
        fill<<<1024, 256>>>(best, B, 0);
        for (int p = 0; p < passes; p++) {
            int *const *above = rows + 2 * (p % 2), *const *below = rows + 2 * (1 - p % 2);
            PULSE_CUDA_CHECK(align_segment(align_segment_query_buffer(query + p * L, B), d, m, align_segment_top_H_buffer(above[0], B),
                                           align_segment_top_F_buffer(above[1], B), align_segment_Best_buffer(pass_best, B),
                                           align_segment_Bottom_H_buffer(below[0], B), align_segment_Bottom_F_buffer(below[1], B), 0));
            keep_best<<<(unsigned)((B + 255) / 256), 256>>>(best, pass_best, B);
        }
    };
    run();
    PULSE_CUDA_CHECK(cudaDeviceSynchronize());
    const float pulse_ms = (float)pulse::cuda::time_median_ms(run, 1, 7);
    auto run_peer = [&] { align_one_thread_per_pair<<<(unsigned)((B + 127) / 128), 128>>>(query, Q, subject, S, nullptr, B, matrix, peer); };
    const float peer_ms = (float)pulse::cuda::time_median_ms(run_peer, 1, 3);
    std::vector<int> got(B), want(B);
    cudaMemcpy(got.data(), best, B * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(want.data(), peer, B * 4, cudaMemcpyDeviceToHost);
    long wrong = 0;
    for (long b = 0; b < B; b++) wrong += got[b] != want[b];
    const double cells = (double)Q * S * B;
    printf("align_long Q=%d (%d passes of %d) S=%d B=%ld: Pulse %.3f ms (%.1f GCUPS), one thread per pair %.3f ms (%.1f GCUPS); %s (%ld of %ld scores differ)\n",
           Q, passes, L, S, B, pulse_ms, cells / pulse_ms / 1e6, peer_ms, cells / peer_ms / 1e6, wrong ? "FAIL" : "PASS", wrong, B);
    printf("CSV,align_long,%d,%d,%d,%ld,%.4f,%.1f,%.4f,%.1f,%s\n", Q, L, S, B, pulse_ms, cells / pulse_ms / 1e6, peer_ms, cells / peer_ms / 1e6,
           wrong ? "FAIL" : "PASS");
    return wrong ? 1 : 0;
}
