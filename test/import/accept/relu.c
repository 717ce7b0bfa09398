// Leaky ReLU after the first two elements: a value-dependent conditional
// (a select) inside an affine one.
void relu(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        y[i] = i < 2 ? x[i] : x[i] > 0.0f ? x[i] : 0.01f * x[i];
}
