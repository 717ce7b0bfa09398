// What the alignment benchmarks share (benchmarks/align_bench.cu,
// benchmarks/align_db_bench.cu): the peer aligner and the residues.
#ifndef PULSE_ALIGN_COMMON_H
#define PULSE_ALIGN_COMMON_H

constexpr int open_penalty = 11, extend_penalty = 1, max_query = 4096;

// The peer: one thread per database sequence, Gotoh's recurrences down the
// subject (its first lengths[b] residues, or all S where lengths is null),
// the query's column of H and E in local memory.
__global__ void align_one_thread_per_pair(const int *query, int Q, const int *subject, int S, const int *lengths, long B, const int *matrix,
                                          int *best) {
    __shared__ int table[24 * 24];
    for (int k = threadIdx.x; k < 24 * 24; k += blockDim.x) table[k] = matrix[k];
    __syncthreads();
    const long b = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (b >= B) return;
    int H[max_query], E[max_query];
    for (int i = 0; i < Q; i++) H[i] = 0, E[i] = -(1 << 14);
    int score = 0;
    const int length = lengths ? lengths[b] : S;
    for (int j = 0; j < length; j++) {
        const int d = subject[b * S + j];
        int diagonal = 0, up = 0, F = -(1 << 14);  // H(i - 1, j - 1), H(i - 1, j), F(i - 1, j)
        for (int i = 0; i < Q; i++) {
            const int left = H[i];  // H(i, j - 1)
            E[i] = max(E[i] - extend_penalty, left - open_penalty);
            F = max(F - extend_penalty, up - open_penalty);
            const int h = max(max(0, diagonal + table[d * 24 + query[i]]), max(E[i], F));
            diagonal = left;
            up = h;
            H[i] = h;
            score = max(score, h);
        }
    }
    best[b] = score;
}

// n residues of the 20 amino acids, a hash of their index and the seed.
__global__ void residues(int *p, long n, unsigned seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        p[i] = (int)(h % 20);
    }
}

#endif
