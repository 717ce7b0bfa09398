// expect: 5:9: error: goto: the control flow must be structured loops and ifs
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++) {
        y[i] = x[i];
        goto done;
    }
done:;
}
