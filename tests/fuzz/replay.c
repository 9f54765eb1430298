/* Runs fuzz inputs through a target's LLVMFuzzerTestOneInput without libFuzzer, so that the seed
 * corpora (tests/fuzz/corpus/<target>/) run in every build, with any compiler, as CTest tests.
 *
 *   fuzz_<target>_replay PATH...     each PATH a file, or a directory whose files all run
 *
 * Exits 0 when every input ran (a finding aborts, as under libFuzzer), 1 on an unreadable path
 * or when no input was found. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *p = realloc(buf, cap *= 2);
            if (!p) free(buf);
            buf = p;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return -1;
    }
    // an exact-size copy, so that a read past the input is an overflow under ASan
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) abort();
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 1;
}

static int cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s does not exist\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return run_file(path);
    DIR *dir = opendir(path);
    if (!dir) return -1;
    char **names = NULL;
    size_t count = 0;
    for (struct dirent *de; (de = readdir(dir));) {
        if (de->d_name[0] == '.') continue;
        char **p = realloc(names, (count + 1) * sizeof *names);
        if (!p) abort();
        names = p;
        size_t len = strlen(path) + strlen(de->d_name) + 2;
        names[count] = malloc(len);
        if (!names[count]) abort();
        snprintf(names[count++], len, "%s/%s", path, de->d_name);
    }
    closedir(dir);
    qsort(names, count, sizeof *names, cmp); // the same order on every file system
    int ran = 0;
    for (size_t i = 0; i < count; i++) {
        int r = run_file(names[i]);
        if (r < 0) ran = -1;
        if (ran >= 0) ran += r;
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv) {
    LLVMFuzzerInitialize(&argc, &argv);
    int total = 0;
    for (int i = 1; i < argc; i++) {
        int r = run_path(argv[i]);
        if (r < 0) return 1;
        total += r;
    }
    printf("replayed %d inputs\n", total);
    return total > 0 ? 0 : 1;
}
