// expect: 8:27: error: the read r[i][0] is not uniform: at (i, j) it reads the value written at (i, 0) (line 5), at a distance (0, j) that is not constant
void f(int N, int M, const float *x, const float *w, float r[restrict][M]) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            if (j == 0)
                r[i][j] = x[i];
            else
                r[i][j] = r[i][0] * w[j];
}
