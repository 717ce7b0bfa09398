// expect: 5:23: error: x[i][j + 1] leaves the array 'x' in dimension 2 (index j + 1, extent M), e.g. at (i = 0, j = 7 with N = 8, M = 8): C would address another row
void f(int N, int M, const float x[][M], float y[restrict][M]) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            y[i][j] = x[i][j + 1];
}
