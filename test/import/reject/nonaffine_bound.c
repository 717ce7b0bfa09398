// expect: 4:29: error: loop bound depends on the loop variable 'i': loop bounds must be affine in the int parameters only (a rectangular nest)
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < i; j++)
            y[i] += x[j];
}
