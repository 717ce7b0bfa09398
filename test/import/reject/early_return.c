// expect: 5:20: error: early exit: return before the end of the function (the loop nest must run to completion)
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++) {
        y[i] = x[i];
        if (i > 3) return;
    }
}
