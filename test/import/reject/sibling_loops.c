// expect: 5:5: error: a second loop in the same body: pulse-import maps one chain of nested loops onto the URE nest
void f(int N, const float *x, float *restrict y, float *restrict z) {
    for (int i = 0; i < N; i++)
        y[i] = x[i];
    for (int i = 0; i < N; i++)
        z[i] = 2.0f * x[i];
}
