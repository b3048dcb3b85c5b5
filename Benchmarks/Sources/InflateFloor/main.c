// inflate-floor FOLDER [PASSES]: the least CPU time any reader spends inflating a folder of
// `.json.gz` responses with libdeflate — one thread, every file read into memory first
// (untimed), inflated into one reused buffer that stays in cache (timed with the thread's CPU
// clock), nothing decoded. Prints the median of PASSES passes (default 5). It bounds what
// gzipped inputs can cost on top of plain ones (see Benchmarks/README.md, "tenth session").
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if __has_include(<libdeflate.h>)
#include <libdeflate.h>

static int compareNames(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static int compareDoubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double cpuNow(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: inflate-floor FOLDER [PASSES]\n");
        return 2;
    }
    int passes = argc > 2 ? atoi(argv[2]) : 5;
    if (passes < 1) passes = 1;
    DIR *folder = opendir(argv[1]);
    if (!folder) { perror(argv[1]); return 1; }
    size_t count = 0, capacity = 1024;
    char **names = malloc(capacity * sizeof *names);
    for (struct dirent *entry; (entry = readdir(folder));) {
        size_t n = strlen(entry->d_name);
        if (n < 3 || strcmp(entry->d_name + n - 3, ".gz") != 0) continue;
        if (count == capacity) names = realloc(names, (capacity *= 2) * sizeof *names);
        names[count++] = strdup(entry->d_name);
    }
    closedir(folder);
    qsort(names, count, sizeof *names, compareNames);
    // Every file in memory first, so that only inflating is timed.
    unsigned char **inputs = malloc(count * sizeof *inputs);
    size_t *sizes = malloc(count * sizeof *sizes), compressed = 0;
    char path[4096];
    for (size_t i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
        FILE *file = fopen(path, "rb");
        if (!file) { perror(path); return 1; }
        fseek(file, 0, SEEK_END);
        sizes[i] = (size_t)ftell(file);
        fseek(file, 0, SEEK_SET);
        inputs[i] = malloc(sizes[i]);
        if (fread(inputs[i], 1, sizes[i], file) != sizes[i]) { fprintf(stderr, "%s: short read\n", path); return 1; }
        fclose(file);
        compressed += sizes[i];
    }
    struct libdeflate_decompressor *inflater = libdeflate_alloc_decompressor();
    size_t outCapacity = 1 << 20, inflated = 0;
    unsigned char *out = malloc(outCapacity);
    double *seconds = malloc((size_t)passes * sizeof *seconds);
    for (int pass = 0; pass < passes; pass++) {
        inflated = 0;
        double start = cpuNow();
        for (size_t i = 0; i < count; i++) {
            size_t in = 0;
            while (in < sizes[i]) { // member after member
                size_t used = 0, made = 0;
                enum libdeflate_result result = libdeflate_gzip_decompress_ex(
                    inflater, inputs[i] + in, sizes[i] - in, out, outCapacity, &used, &made);
                if (result == LIBDEFLATE_INSUFFICIENT_SPACE) {
                    out = realloc(out, outCapacity *= 2);
                    continue;
                }
                if (result != LIBDEFLATE_SUCCESS) { fprintf(stderr, "%s: not gzip\n", names[i]); return 1; }
                in += used;
                inflated += made;
            }
        }
        seconds[pass] = cpuNow() - start;
    }
    qsort(seconds, (size_t)passes, sizeof *seconds, compareDoubles);
    double median = seconds[passes / 2];
    printf("%zu files, %.1f MB gzipped, %.1f MB inflated: %.2f s CPU (median of %d passes, %.2f-%.2f), %.2f GB/s on one thread\n",
           count, compressed / 1e6, inflated / 1e6, median, passes, seconds[0], seconds[passes - 1], inflated / 1e9 / median);
    return 0;
}
#else
int main(void) {
    fprintf(stderr, "inflate-floor: built without libdeflate (Linux only)\n");
    return 2;
}
#endif
