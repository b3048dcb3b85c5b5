// An experiment, not product code: how long a simdjson-style first stage (the structural index:
// escapes, strings, structural characters and the starts of scalars, 64 bytes at a time with
// AVX2 and carry-less multiplication) takes over a folder of saved responses, on one core, with
// the files already in memory. It sizes what a structural-index decoder could save in
// `ferry replay FOLDER/` (Benchmarks/README.md, thirteenth session). No UTF-8 check, no stage 2.
//
//   cc -O3 -mavx2 -mpclmul -o /tmp/structural-index Benchmarks/Experiments/structural-index.c
//   /tmp/structural-index DATA/changes-responses
#include <immintrin.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t eq(__m256i a, __m256i b, char c) {
    __m256i k = _mm256_set1_epi8(c);
    uint32_t lo = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, k));
    uint32_t hi = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, k));
    return (uint64_t)lo | ((uint64_t)hi << 32);
}
static uint64_t prefix_xor(uint64_t x) {
    __m128i v = _mm_set_epi64x(0, (long long)x);
    __m128i all = _mm_set1_epi8((char)0xFF);
    return (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(v, all, 0));
}
static const uint64_t EVEN = 0x5555555555555555ULL;

// Returns the count of structural positions; writes them to idx.
static size_t index_buffer(const uint8_t *p, size_t n, uint32_t *idx) {
    uint64_t prev_in_string = 0, prev_escaped = 0, prev_scalar = 0;
    size_t count = 0;
    uint8_t tail[64];
    for (size_t i = 0; i < n; i += 64) {
        const uint8_t *block = p + i;
        if (n - i < 64) { memset(tail, 0x20, 64); memcpy(tail, p + i, n - i); block = tail; }
        __m256i a = _mm256_loadu_si256((const __m256i *)block), b = _mm256_loadu_si256((const __m256i *)(block + 32));
        uint64_t bs = eq(a, b, '\\');
        // escaped characters (simdjson's method)
        uint64_t escaped;
        {
            uint64_t start = bs & ~(bs << 1) & ~prev_escaped;
            uint64_t even_starts = start & EVEN, odd_starts = start & ~EVEN;
            uint64_t even_carries = bs + even_starts;
            uint64_t odd_carries; int carry = __builtin_add_overflow(bs, odd_starts, &odd_carries);
            odd_carries |= prev_escaped;
            prev_escaped = (uint64_t)carry;
            uint64_t even_carry_ends = even_carries & ~bs, odd_carry_ends = odd_carries & ~bs;
            escaped = (even_carry_ends & ~EVEN) | (odd_carry_ends & EVEN);
        }
        uint64_t quotes = eq(a, b, '"') & ~escaped;
        uint64_t in_string = prefix_xor(quotes) ^ prev_in_string;
        prev_in_string = (uint64_t)((int64_t)in_string >> 63);
        // (A nibble lookup, as simdjson does, would classify faster than these compares.)
        uint64_t op = eq(a, b, '{') | eq(a, b, '}') | eq(a, b, '[') | eq(a, b, ']') | eq(a, b, ':') | eq(a, b, ',');
        uint64_t ws = eq(a, b, ' ') | eq(a, b, '\n') | eq(a, b, '\r') | eq(a, b, '\t');
        uint64_t scalar = ~(op | ws);
        uint64_t nonquote_scalar = scalar & ~quotes;
        // A scalar (number, literal) starts where a non-quote scalar byte follows a non-scalar one.
        uint64_t follows = (scalar << 1) | prev_scalar;
        prev_scalar = scalar >> 63;
        uint64_t structurals = (op & ~in_string) | (quotes & in_string) | (nonquote_scalar & ~follows & ~in_string);
        while (structurals) { idx[count++] = (uint32_t)(i + (size_t)__builtin_ctzll(structurals)); structurals &= structurals - 1; }
    }
    return count;
}

int main(int argc, char **argv) {
    DIR *d = opendir(argv[1]);
    struct dirent *e;
    size_t bytes = 0, structurals = 0, files = 0;
    uint32_t *idx = malloc(64u << 20);
    double total = 0;
    char path[4096];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        int fd = open(path, O_RDONLY); struct stat st; fstat(fd, &st);
        uint8_t *p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
        structurals += index_buffer(p, st.st_size, idx);
        clock_gettime(CLOCK_MONOTONIC, &b);
        total += (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
        bytes += st.st_size; files++;
        munmap(p, st.st_size); close(fd);
    }
    printf("%zu files, %.2f GB, %zu structurals (%.1f per KB); stage 1 on one core: %.2f s (%.2f GB/s)\n",
           files, bytes / 1e9, structurals, structurals * 1000.0 / bytes, total, bytes / 1e9 / total);
    return 0;
}
