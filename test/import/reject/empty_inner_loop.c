// expect: 5:9: error: loop 'j' runs no iteration at (i = 0 with N = 8), whatever the parameters: every loop must run at least once at each iteration of the loops around it (the merged nest has no point for a statement around an empty loop)
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++) {
        float acc = 0.0f;
        for (int j = 0; j < i; j++)
            acc += x[j];
        y[i] = acc;
    }
}
