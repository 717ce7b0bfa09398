// 2-D convolution: y[i][j] = sum_{p,q} x[i + p][j + q] * w[p][q].
void conv2d(int H, int W, int P, int Q, const float x[][W + Q - 1], const float w[][Q], float y[restrict][W]) {
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
            float acc = 0.0f;
            for (int p = 0; p < P; p++)
                for (int q = 0; q < Q; q++)
                    acc += x[i + p][j + q] * w[p][q];
            y[i][j] = acc;
        }
}
