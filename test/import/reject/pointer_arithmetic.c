// expect: 4:16: error: pointer arithmetic: *(x + i)
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        y[i] = *(x + i);
}
