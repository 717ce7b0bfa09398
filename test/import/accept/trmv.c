// Lower-triangular matrix-vector product y = L v on the triangle j <= i: the
// inner loop's bound depends on the outer loop (set_bounds(j, 0, i + 1)).
void trmv(int N, const float L[][N], const float *v, float *restrict y) {
    for (int i = 0; i < N; i++) {
        float sum = 0.0f;
        for (int j = 0; j <= i; j++)
            sum += L[i][j] * v[j];
        y[i] = sum;
    }
}
