// Decimating FIR filter, stride 2: y[n] = sum_k h[k] * x[2n + k].
void fir_stride(int N, int K, const float *x, const float *h, float *restrict y) {
    for (int n = 0; n < N; n++) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++)
            acc += h[k] * x[2 * n + k];
        y[n] = acc;
    }
}
