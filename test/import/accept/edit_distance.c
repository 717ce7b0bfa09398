// Edit distance (Levenshtein) between a[0..N) and b[0..M): d[i][j] is the
// distance between the prefixes of lengths i and j.
#define MIN(x, y) ((x) < (y) ? (x) : (y))

void edit_distance(int N, int M, const int *a, const int *b, int d[restrict][M + 1]) {
    for (int i = 0; i <= N; i++)
        for (int j = 0; j <= M; j++) {
            if (i == 0)
                d[i][j] = j;
            else if (j == 0)
                d[i][j] = i;
            else
                d[i][j] = MIN(MIN(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + (a[i - 1] != b[j - 1]));
        }
}
