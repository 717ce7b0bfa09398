// expect: 5:29: error: the bound i * i + 1 of loop 'j' is not affine: i * i is a product of loop variables
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++) {
        float acc = 0.0f;
        for (int j = 0; j < i * i + 1; j++)
            acc += x[j];
        y[i] = acc;
    }
}
