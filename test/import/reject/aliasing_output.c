// expect: 2:31: error: output array 'y' may alias the input 'x': the spec keeps inputs and outputs apart
void f(int N, const float *x, float *y) {
    for (int i = 0; i < N; i++)
        y[i] = 2.0f * x[i];
}
