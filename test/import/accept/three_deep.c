// Accumulators at two depths, two outputs, and an output element rewritten at
// every i (its final value is the last one).
void three_deep(int N, int M, int L, const float *x, float *restrict y, float *restrict z) {
    for (int i = 0; i < N; i++) {
        float a = 0.0f;
        for (int j = 0; j < M; j++) {
            float b = 0.0f;
            for (int k = 0; k < L; k++)
                b += x[i + j + k];
            a += b * b;
            z[j] = b;
        }
        y[i] = a;
    }
}
