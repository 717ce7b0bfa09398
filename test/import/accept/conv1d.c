// 1-D convolution: z[c] = sum_q x[c + q] * w[q].
void conv1d(int C, int Q, const float *x, const float *w, float *restrict z) {
    for (int c = 0; c < C; c++) {
        float acc = 0.0f;
        for (int q = 0; q < Q; q++)
            acc += x[c + q] * w[q];
        z[c] = acc;
    }
}
