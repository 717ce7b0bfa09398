// expect: 4:16: error: integer division or remainder: C rounds toward zero and Pulse (Halide) rounds down, so x[i] / 2 could differ for negative values
void f(int N, const int *x, int *restrict y) {
    for (int i = 0; i < N; i++)
        y[i] = x[i] / 2;
}
