#ifndef CJSONSCAN_JSON_SCAN_H
#define CJSONSCAN_JSON_SCAN_H
#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

/// The index of the first byte from `start` that a JSON string's walk must look at (a quote, a
/// backslash, a control character below 0x20, or a byte of 0x80 and above), read sixteen bytes at
/// a time; or, when none is found, the first index with fewer than sixteen bytes left, from where
/// the caller reads on (eight at a time, then byte by byte). Returns `start` on a CPU without
/// SSE2 or NEON.
static inline __attribute__((always_inline)) size_t
json_scan_skip_plain16(const uint8_t *bytes, size_t start, size_t count) {
    size_t index = start;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (index + 16 <= count) {
        const __m128i chunk = _mm_loadu_si128((const __m128i *)(bytes + index));
        // Signed: a byte of 0x80 and above is negative, so "below 0x20" takes non-ASCII bytes too.
        const __m128i hits = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)), _mm_cmplt_epi8(chunk, space));
        const int mask = _mm_movemask_epi8(hits);
        if (mask != 0) return index + (size_t)__builtin_ctz((unsigned)mask);
        index += 16;
    }
#elif defined(__ARM_NEON)
    const uint8x16_t quote = vdupq_n_u8('"');
    const uint8x16_t backslash = vdupq_n_u8('\\');
    const uint8x16_t space = vdupq_n_u8(0x20);
    const uint8x16_t high = vdupq_n_u8(0x80);
    while (index + 16 <= count) {
        const uint8x16_t chunk = vld1q_u8(bytes + index);
        const uint8x16_t hits = vorrq_u8(
            vorrq_u8(vceqq_u8(chunk, quote), vceqq_u8(chunk, backslash)),
            vorrq_u8(vcltq_u8(chunk, space), vcgeq_u8(chunk, high)));
        // Four bits per byte (the shift-right-and-narrow idiom): the first hit is the lowest nibble set.
        const uint64_t nibbles = vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(hits), 4)), 0);
        if (nibbles != 0) return index + (size_t)(__builtin_ctzll(nibbles) >> 2);
        index += 16;
    }
#endif
    return index;
}

/// Copies the bytes of a JSON string's body from `source[start]` up to the first quote or
/// backslash (or `count`) to `destination`, sixteen bytes at a time, and returns the index it
/// stopped at; the caller copies the rest of the string itself. `destination` must have room for
/// sixteen bytes past what is copied: a chunk is stored whole before the copy stops inside it.
/// Returns `start` on a CPU without SSE2 or NEON (the caller then copies byte by byte).
static inline __attribute__((always_inline)) size_t
json_copy_string_run16(const uint8_t *source, size_t start, size_t count, uint8_t *destination) {
    size_t index = start;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    while (index + 16 <= count) {
        const __m128i chunk = _mm_loadu_si128((const __m128i *)(source + index));
        _mm_storeu_si128((__m128i *)(destination + (index - start)), chunk);
        const int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)));
        if (mask != 0) return index + (size_t)__builtin_ctz((unsigned)mask);
        index += 16;
    }
#elif defined(__ARM_NEON)
    const uint8x16_t quote = vdupq_n_u8('"');
    const uint8x16_t backslash = vdupq_n_u8('\\');
    while (index + 16 <= count) {
        const uint8x16_t chunk = vld1q_u8(source + index);
        vst1q_u8(destination + (index - start), chunk);
        const uint8x16_t hits = vorrq_u8(vceqq_u8(chunk, quote), vceqq_u8(chunk, backslash));
        const uint64_t nibbles = vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(hits), 4)), 0);
        if (nibbles != 0) return index + (size_t)(__builtin_ctzll(nibbles) >> 2);
        index += 16;
    }
#endif
    return index;
}

#endif
