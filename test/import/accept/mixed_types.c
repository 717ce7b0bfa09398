// double accumulation of float inputs, with *= and -= and C's conversions.
void mixed_types(int N, int M, const float *x, const int *k, double *restrict y) {
    for (int i = 0; i < N; i++) {
        double s = 1;
        for (int j = 0; j < M; j++) {
            s *= 1.5;
            s -= x[i + j] * 2.0 + k[j] / 4.0f;
        }
        y[i] = s;
    }
}
