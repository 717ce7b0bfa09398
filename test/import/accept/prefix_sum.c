// Inclusive prefix sum.
void prefix_sum(int N, const int *x, int *restrict s) {
    int acc = 0;
    for (int i = 0; i < N; i++) {
        acc += x[i];
        s[i] = acc;
    }
}
