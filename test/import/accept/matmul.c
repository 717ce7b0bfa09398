// Matrix multiply: c = a * b, accumulated in place in c.
void matmul(int I, int J, int K, const float a[][K], const float b[][J], float c[restrict][J]) {
    for (int i = 0; i < I; i++)
        for (int j = 0; j < J; j++) {
            c[i][j] = 0.0f;
            for (int k = 0; k < K; k++)
                c[i][j] += a[i][k] * b[k][j];
        }
}
