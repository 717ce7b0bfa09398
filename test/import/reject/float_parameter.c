// expect: 2:15: error: scalar parameter 'alpha' of type float: only int parameters (sizes) are accepted
void f(int N, float alpha, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        y[i] = alpha * x[i];
}
