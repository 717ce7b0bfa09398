// 2-D 5-point stencil (Jacobi sweep) over the interior of an (N+2) x (M+2) grid.
void stencil5(int N, int M, const float in[][M + 2], float out[restrict][M + 2]) {
    for (int i = 1; i <= N; i++)
        for (int j = 1; j <= M; j++)
            out[i][j] = 0.5f * in[i][j] + 0.125f * (in[i - 1][j] + in[i + 1][j] + in[i][j - 1] + in[i][j + 1]);
}
