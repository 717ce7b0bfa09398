// expect: 4:13: error: the condition of this if is not affine (x[i] is not an integer expression)
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        if (x[i] > 0.0f)
            y[i] = x[i];
}
