/* Replays a fuzzer's corpus without libFuzzer: every file of the directories
 * (or the files) named on the command line goes once to the harness's
 * LLVMFuzzerTestOneInput, in a buffer of exactly its size, so that a build
 * under AddressSanitizer + UndefinedBehaviorSanitizer (gcc is enough) checks
 * every input the fuzzer kept. tests/CMakeLists.txt links it with each
 * harness as fuzz_<name>_replay, the CTest test fuzz_<name>_corpus.
 *
 * The skip rule of tests/test_util.h: a corpus directory that is not there is
 * a skip of topic "corpus" (exit 77), a failure when PB_REQUIRE names it. An
 * empty corpus fails. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SKIPPED 77

static int required(const char *topic)
{
    const char *req = getenv("PB_REQUIRE");
    size_t n = strlen(topic);
    for (const char *p = req; p && *p;) {
        size_t len = strcspn(p, ", ");
        if (len == n && strncmp(p, topic, n) == 0)
            return 1;
        p += len;
        p += strspn(p, ", ");
    }
    return 0;
}

/* One file, whole, into a buffer of its size; 0 when it could not be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        return 0;
    }
    size_t cap = 1 << 12, len = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap *= 2);
            if (!bigger)
                free(buf);
            buf = bigger;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "out of memory reading %s\n", path);
        return 0;
    }
    /* Exactly len bytes, so that a read past the input is caught. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return 0;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 1;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    size_t inputs = 0;
    for (int a = 1; a < argc; a++) {
        struct stat sb;
        if (stat(argv[a], &sb) != 0) {
            if (required("corpus")) {
                fprintf(stderr, "FAIL: corpus is required (PB_REQUIRE) but did not run: no corpus at %s\n",
                        argv[a]);
                return 1;
            }
            printf("SKIP: corpus not checked here: no corpus at %s\n", argv[a]);
            return SKIPPED;
        }
        if (!S_ISDIR(sb.st_mode)) {
            if (!replay_file(argv[a]))
                return 1;
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[a]);
        if (!d) {
            fprintf(stderr, "cannot read %s\n", argv[a]);
            return 1;
        }
        char **names = NULL;
        size_t n = 0;
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.')
                continue;
            char **bigger = realloc(names, (n + 1) * sizeof *bigger);
            if (!bigger || !(bigger[n] = strdup(e->d_name))) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
            names = bigger;
            n++;
        }
        closedir(d);
        if (n)
            qsort(names, n, sizeof *names, by_name);
        int ok = 1;
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(argv[a]) + strlen(names[i]) + 2;
            char *path = malloc(len);
            if (path) {
                snprintf(path, len, "%s/%s", argv[a], names[i]);
                ok = ok && replay_file(path);
                free(path);
            } else {
                ok = 0;
            }
            free(names[i]);
        }
        free(names);
        if (!ok)
            return 1;
        inputs += n;
    }
    if (!inputs) {
        fprintf(stderr, "FAIL: no inputs in the corpus\n");
        return 1;
    }
    printf("%zu inputs replayed\n", inputs);
    return 0;
}
