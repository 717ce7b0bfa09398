// expect: 4:5: error: while loop: its trip count is not affine
void f(int N, const float *x, float *restrict y) {
    int i = 0;
    while (i < N) {
        y[i] = x[i];
        i += 1;
    }
}
