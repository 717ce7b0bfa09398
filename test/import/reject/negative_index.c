// expect: 4:16: error: x[i - 1] leaves the array 'x' in dimension 1 (index i - 1, below 0), e.g. at (i = 0 with N = 8): C would address memory before the array
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        y[i] = x[i - 1];
}
