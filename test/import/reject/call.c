// expect: 5:16: error: call to 'sqrtf': only fminf, fmaxf, fmin and fmax are accepted (write min and max of ints as a ? b : c)
float sqrtf(float);
void f(int N, const float *x, float *restrict y) {
    for (int i = 0; i < N; i++)
        y[i] = sqrtf(x[i]);
}
