// expect: 4:16: error: the read y[i + 1] takes the initial contents of 'y', e.g. at (i = 7 with N = 8): the array is both an input and an output (aliasing)
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        y[i] = y[i + 1] + x[i];
}
