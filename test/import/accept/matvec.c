// Matrix-vector product with a flat row-major matrix: y = A v.
void matvec(int I, int J, const double *a, const double *v, double *restrict y) {
    for (int i = 0; i < I; i++) {
        double sum = 0;
        for (int j = 0; j < J; j++)
            sum += a[i * J + j] * v[j];
        y[i] = sum;
    }
}
