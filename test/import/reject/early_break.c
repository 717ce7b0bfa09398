// expect: 5:13: error: early exit: break leaves the loop before its bound
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++) {
        if (i == 5)
            break;
        y[i] = x[i];
    }
}
