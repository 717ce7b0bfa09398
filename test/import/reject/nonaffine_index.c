// expect: 4:18: error: non-affine index i * i: a product of loop variables
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        y[i] = x[i * i];
}
