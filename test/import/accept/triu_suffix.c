// Upper-triangular matrix-vector product y = U v on the triangle i <= j < N:
// the inner loop starts at the outer variable (set_bounds(j, i, N - i)), so
// each row's sum runs over its suffix, y[i] = sum_{j >= i} U[i][j] * v[j].
void triu_suffix(int N, const double U[][N], const double *v, double *restrict y) {
    for (int i = 0; i < N; i++) {
        double sum = 0;
        for (int j = i; j < N; j++)
            sum += U[i][j] * v[j];
        y[i] = sum;
    }
}
