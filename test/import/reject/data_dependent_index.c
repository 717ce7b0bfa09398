// expect: 4:18: error: non-affine index: it depends on the array element idx[i]
void f(int N, const int *idx, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        y[i] = x[idx[i]];
}
