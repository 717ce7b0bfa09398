// expect: 5:13: error: only part of 'y' is written: its index spans elements over the loop nest that this assignment never writes, e.g. y[0] (with N = 8)
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        if (i >= 2)
            y[i] = x[i] > 0.0f ? x[i] : 0.01f * x[i];
}
