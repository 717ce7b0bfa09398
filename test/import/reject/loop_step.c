// expect: 3:28: error: the loop step must be i++: a stride belongs in the index (x[2 * i + k])
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i += 2)
        y[i] = x[i];
}
