// expect: 5:39: error: the read b[i - 1][N - 1 - j] is not uniform: at (i, j) it reads the value written at (i - 1, N - j - 1) (line 5), at a distance (1, -N + 2 * j + 1) that is not constant
void f(int N, const float *x, float b[restrict][N]) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            b[i][j] = i == 0 ? x[j] : b[i - 1][N - 1 - j];
}
