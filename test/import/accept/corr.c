// Correlation as most C is written: no restrict. pulse-import assumes, with a
// warning and a comment in the spec, that res does not overlap sig or tap; the
// generated host functions refuse overlapping buffers at run time.
void corr(int n, int k, const float *sig, const float *tap, float *res) {
    for (int i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int j = 0; j < k; j++)
            acc += sig[i + j] * tap[j];
        res[i] = acc;
    }
}
