// Longest common subsequence (the textbook form): L[i][j] is the length of the
// longest common subsequence of a[0..i) and b[0..j). The data-dependent arm
// reads a[i - 1] only where the first arm failed (i >= 1 and j >= 1).
void lcs(int N, int M, const int *a, const int *b, int L[restrict][M + 1]) {
    for (int i = 0; i <= N; i++)
        for (int j = 0; j <= M; j++) {
            if (i == 0 || j == 0)
                L[i][j] = 0;
            else if (a[i - 1] == b[j - 1])
                L[i][j] = L[i - 1][j - 1] + 1;
            else
                L[i][j] = L[i - 1][j] > L[i][j - 1] ? L[i - 1][j] : L[i][j - 1];
        }
}
