// expect: 6:13: error: 'acc' is read before it is assigned, e.g. at (i = 0, k = 0 with N = 8, K = 8)
void f(int N, int K, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++) {
        float acc;
        for (int k = 0; k < K; k++)
            acc += x[i + k];
        y[i] = acc;
    }
}
