#ifndef CJSONSCAN_JSON_SCAN_H
#define CJSONSCAN_JSON_SCAN_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>
#define JSON_SCAN_HAS_AVX2_PATH 1
#endif

#if JSON_SCAN_HAS_AVX2_PATH
/// Whether this CPU and its operating system run AVX2: the CPU has AVX and AVX2, and the system
/// saves the YMM registers (OSXSAVE, and XCR0's SSE and AVX bits). Asked once per module that
/// includes this header; a CPU without them takes the sixteen-byte path.
static inline int json_scan_detect_avx2(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    if (!(ecx & bit_OSXSAVE) || !(ecx & bit_AVX)) return 0;
    unsigned low, high;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    if ((low & 6) != 6) return 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    return (ebx & bit_AVX2) != 0;
}

/// ``json_scan_detect_avx2``, asked once and remembered (a relaxed atomic: every thread that
/// asks first finds the same answer).
static inline int json_scan_uses_avx2(void) {
    static int known = -1;
    int value = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (value < 0) {
        value = json_scan_detect_avx2();
        __atomic_store_n(&known, value, __ATOMIC_RELAXED);
    }
    return value;
}

/// ``json_scan_skip_plain16``'s test, thirty-two bytes at a time (AVX2): about half the
/// instructions per byte of a long string, the text of most payloads by size. Returns the first
/// byte to look at, or the first index with fewer than thirty-two bytes left.
__attribute__((target("avx2"))) static inline size_t
json_scan_skip_plain32(const uint8_t *bytes, size_t start, size_t count) {
    size_t index = start;
    const __m256i quote = _mm256_set1_epi8('"');
    const __m256i backslash = _mm256_set1_epi8('\\');
    // Signed, as in the sixteen-byte test: a byte of 0x80 and above is below 0x20 too.
    const __m256i space = _mm256_set1_epi8(0x20);
    while (index + 32 <= count) {
        const __m256i chunk = _mm256_loadu_si256((const __m256i *)(bytes + index));
        const __m256i hits = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(chunk, quote), _mm256_cmpeq_epi8(chunk, backslash)),
            _mm256_cmpgt_epi8(space, chunk));
        const unsigned mask = (unsigned)_mm256_movemask_epi8(hits);
        if (mask != 0) return index + (size_t)__builtin_ctz(mask);
        index += 32;
    }
    return index;
}
#endif

/// The index of the first byte from `start` that a JSON string's walk must look at (a quote, a
/// backslash, a control character below 0x20, or a byte of 0x80 and above), read sixteen bytes at
/// a time (past the first sixteen, thirty-two at a time on a CPU with AVX2); or, when none is
/// found, the first index with fewer than sixteen bytes left, from where the caller reads on
/// (eight at a time, then byte by byte). Returns `start` on a CPU without SSE2 or NEON.
static inline __attribute__((always_inline)) size_t
json_scan_skip_plain16(const uint8_t *bytes, size_t start, size_t count) {
    size_t index = start;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    // Signed: a byte of 0x80 and above is negative, so "below 0x20" takes non-ASCII bytes too.
#define JSON_SCAN_HITS16(chunk) \
    _mm_movemask_epi8(_mm_or_si128( \
        _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)), _mm_cmplt_epi8(chunk, space)))
#if JSON_SCAN_HAS_AVX2_PATH
    // Most strings end within their first sixteen bytes, here, inline; only a longer one goes on
    // to the wider test, which is a call (a function of another target is not inlined).
    if (index + 16 <= count) {
        const int mask = JSON_SCAN_HITS16(_mm_loadu_si128((const __m128i *)(bytes + index)));
        if (mask != 0) return index + (size_t)__builtin_ctz((unsigned)mask);
        index += 16;
        if (index + 32 <= count && json_scan_uses_avx2()) {
            index = json_scan_skip_plain32(bytes, index, count);
            if (index + 32 <= count) return index;
        }
    }
#endif
    while (index + 16 <= count) {
        const int mask = JSON_SCAN_HITS16(_mm_loadu_si128((const __m128i *)(bytes + index)));
        if (mask != 0) return index + (size_t)__builtin_ctz((unsigned)mask);
        index += 16;
    }
#undef JSON_SCAN_HITS16
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

/// The value of a hexadecimal digit, or -1.
static inline __attribute__((always_inline)) int json_hex_digit(uint8_t byte) {
    if (byte >= '0' && byte <= '9') return byte - '0';
    if (byte >= 'a' && byte <= 'f') return byte - 'a' + 10;
    if (byte >= 'A' && byte <= 'F') return byte - 'A' + 10;
    return -1;
}

/// The four hexadecimal digits at `start` (`start + 4 <= count`), or -1.
static inline __attribute__((always_inline)) int32_t json_hex4(const uint8_t *source, size_t start, size_t count) {
    if (start + 4 > count) return -1;
    int32_t value = 0;
    for (size_t position = start; position < start + 4; position++) {
        const int digit = json_hex_digit(source[position]);
        if (digit < 0) return -1;
        value = value << 4 | digit;
    }
    return value;
}

/// Writes the escape at `source[index]` (a backslash) as `JSONWriter` writes the character it
/// stands for (`\/` as `/`, `\u00e9` as its UTF-8 bytes, a surrogate pair as four, `\u001F` as
/// `\u001f`, `\u000a` as `\n`; its own escapes as they are) at `destination[*length]`; returns the
/// index after the escape. An escape that is not valid JSON is left as it is.
static inline size_t json_rewrite_escape(const uint8_t *source, size_t index, size_t count, uint8_t *destination, size_t *length) {
    size_t out = *length;
    if (index + 1 >= count) {
        destination[out++] = source[index];
        *length = out;
        return index + 1;
    }
    const uint8_t escape = source[index + 1];
    if (escape == '/') {
        destination[out++] = '/';
        *length = out;
        return index + 2;
    }
    if (escape != 'u') {
        destination[out++] = source[index];
        destination[out++] = escape;
        *length = out;
        return index + 2;
    }
    int32_t unit = json_hex4(source, index + 2, count);
    uint32_t scalar;
    size_t end;
    if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) {
        destination[out++] = source[index];
        *length = out;
        return index + 1;
    }
    if (unit >= 0xD800 && unit <= 0xDBFF) {
        const int32_t low = index + 7 < count && source[index + 6] == '\\' && source[index + 7] == 'u' ? json_hex4(source, index + 8, count) : -1;
        if (low < 0xDC00 || low > 0xDFFF) {
            destination[out++] = source[index];
            *length = out;
            return index + 1;
        }
        scalar = 0x10000 + (((uint32_t)unit - 0xD800) << 10) + ((uint32_t)low - 0xDC00);
        end = index + 12;
    } else {
        scalar = (uint32_t)unit;
        end = index + 6;
    }
    static const char hex[] = "0123456789abcdef";
    if (scalar == 0x22 || scalar == 0x5C) {
        destination[out++] = '\\';
        destination[out++] = (uint8_t)scalar;
    } else if (scalar < 0x20) {
        destination[out++] = '\\';
        switch (scalar) {
        case 0x08: destination[out++] = 'b'; break;
        case 0x09: destination[out++] = 't'; break;
        case 0x0A: destination[out++] = 'n'; break;
        case 0x0C: destination[out++] = 'f'; break;
        case 0x0D: destination[out++] = 'r'; break;
        default:
            destination[out++] = 'u';
            destination[out++] = '0';
            destination[out++] = '0';
            destination[out++] = (uint8_t)hex[scalar >> 4];
            destination[out++] = (uint8_t)hex[scalar & 0x0F];
        }
    } else if (scalar < 0x80) {
        destination[out++] = (uint8_t)scalar;
    } else if (scalar < 0x800) {
        destination[out++] = (uint8_t)(0xC0 | scalar >> 6);
        destination[out++] = (uint8_t)(0x80 | (scalar & 0x3F));
    } else if (scalar < 0x10000) {
        destination[out++] = (uint8_t)(0xE0 | scalar >> 12);
        destination[out++] = (uint8_t)(0x80 | ((scalar >> 6) & 0x3F));
        destination[out++] = (uint8_t)(0x80 | (scalar & 0x3F));
    } else {
        destination[out++] = (uint8_t)(0xF0 | scalar >> 18);
        destination[out++] = (uint8_t)(0x80 | ((scalar >> 12) & 0x3F));
        destination[out++] = (uint8_t)(0x80 | ((scalar >> 6) & 0x3F));
        destination[out++] = (uint8_t)(0x80 | (scalar & 0x3F));
    }
    *length = out;
    return end;
}

/// Writes one byte of valid JSON at `source[index]`, or one escape, in compact form to
/// `destination[*length]`, following whether it is inside a string (`*inString`); returns the
/// index after it. Whitespace outside strings goes; an escape is rewritten (`json_rewrite_escape`).
static inline __attribute__((always_inline)) size_t
json_compact_step(const uint8_t *source, size_t index, size_t count, uint8_t *destination, size_t *length, int *inString) {
    const uint8_t byte = source[index];
    if (*inString) {
        if (byte == '\\') return json_rewrite_escape(source, index, count, destination, length);
        destination[(*length)++] = byte;
        if (byte == '"') *inString = 0;
        return index + 1;
    }
    if (byte == ' ' || byte == '\n' || byte == '\r' || byte == '\t') return index + 1;
    destination[(*length)++] = byte;
    if (byte == '"') *inString = 1;
    return index + 1;
}

/// Writes the compact form of `count` bytes of valid JSON (`JSONWriter`'s form: no whitespace
/// outside strings, its own escapes) to `destination`, which must have room for `count + 16`
/// bytes; returns how many it wrote (never more than `count`). Repeated keys are not resolved
/// here: the caller knows there are none.
///
/// Sixteen bytes at a time: the quotes' running parity (a prefix XOR of their mask, carried from
/// one chunk to the next) tells which bytes are inside strings, so whitespace outside them is
/// dropped without walking the chunk token by token; the bytes kept are stored in runs, each run
/// a single sixteen-byte store. A chunk inside one string from end to end, or with no whitespace
/// at all, is stored whole without the parity. A chunk with a backslash is walked byte by byte up
/// to the end of its escape (rewritten by `json_rewrite_escape`), then the chunks go on. A
/// provider's spaced or pretty JSON has a few whitespace runs in most chunks of its structure,
/// long strings without any, and an escape in few chunks.
static inline size_t json_compact_plain(const uint8_t *source, size_t count, uint8_t *destination) {
    size_t index = 0;
    size_t length = 0;
    int inString = 0;
#if defined(__SSE2__)
    // The chunk, copied where a run may be loaded from any of its sixteen offsets without
    // reading past it (a load from the source could run past the document's end).
    uint8_t scratch[32] = {0};
    while (index + 16 <= count) {
        const __m128i chunk = _mm_loadu_si128((const __m128i *)(source + index));
        const unsigned backslashes = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('\\')));
        if (backslashes) {
            // Byte by byte through the first escape (an escape is inside a string: the JSON is valid).
            const size_t escape = index + (size_t)__builtin_ctz(backslashes);
            while (index <= escape) index = json_compact_step(source, index, count, destination, &length, &inString);
            continue;
        }
        const unsigned quotes = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('"')));
        if (inString && quotes == 0) {
            // Inside a string from end to end (a long text, a filler): kept whole.
            _mm_storeu_si128((__m128i *)(destination + length), chunk);
            length += 16;
            index += 16;
            continue;
        }
        const __m128i spaces = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(chunk, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\n'))),
            _mm_or_si128(_mm_cmpeq_epi8(chunk, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\t'))));
        const unsigned whitespace = (unsigned)_mm_movemask_epi8(spaces);
        if (whitespace == 0) {
            // No whitespace to drop, wherever the strings are: kept whole.
            _mm_storeu_si128((__m128i *)(destination + length), chunk);
            length += 16;
            if (__builtin_popcount(quotes) & 1) inString = !inString;
            index += 16;
            continue;
        }
        // Bit i: the parity of the quotes at 0...i, so a byte that is no quote is inside a string
        // exactly when its bit differs from the state the chunk started in.
        unsigned parity = quotes;
        parity ^= parity << 1;
        parity ^= parity << 2;
        parity ^= parity << 4;
        parity ^= parity << 8;
        const unsigned inside = (parity ^ (inString ? 0xFFFFu : 0u)) & 0xFFFFu;
        const unsigned dropped = whitespace & ~inside;
        if (dropped == 0) {
            _mm_storeu_si128((__m128i *)(destination + length), chunk);
            length += 16;
        } else {
            _mm_storeu_si128((__m128i *)scratch, chunk);
            unsigned kept = ~dropped & 0xFFFFu;
            while (kept) {
                const unsigned start = (unsigned)__builtin_ctz(kept);
                // The run of kept bytes from `start`: the shifted mask's first zero ends it.
                const unsigned run = (unsigned)__builtin_ctz(~(kept >> start));
                _mm_storeu_si128((__m128i *)(destination + length), _mm_loadu_si128((const __m128i *)(scratch + start)));
                length += run;
                kept &= ~(((1u << run) - 1u) << start);
            }
        }
        // An odd number of quotes turns the state over for the next chunk.
        if (__builtin_popcount(quotes) & 1) inString = !inString;
        index += 16;
    }
#endif
    // The last bytes (all of them without SSE2), one at a time, strings' bodies in runs.
    while (index < count) {
        if (inString) {
            const size_t stop = json_copy_string_run16(source, index, count, destination + length);
            length += stop - index;
            index = stop;
            if (index >= count) break;
        }
        index = json_compact_step(source, index, count, destination, &length, &inString);
    }
    return length;
}

/// Copies the `count` bytes of `source` to `destination` but for `runCount` runs of them (`runs`:
/// two offsets per run, where it starts and where it ends, in order) and returns how many bytes
/// it wrote; `destination` must have room for `count + 16` bytes. What lies between two runs is
/// copied sixteen bytes at a time (the last chunk stored whole, past what is kept, and never read
/// past `count`). Returns `SIZE_MAX`, having written what it may, when the runs are out of order
/// or out of the bytes.
///
/// The whitespace of a spaced or pretty document, as the scanner found it (`WhitespaceRuns`): a
/// copy per line or per member instead of `json_compact_plain`'s walk with a mask per chunk.
static inline size_t json_copy_between_runs(const uint8_t *source, size_t count, const uint32_t *runs, size_t runCount, uint8_t *destination) {
    size_t length = 0;
    size_t from = 0;
    for (size_t run = 0; run <= runCount; run++) {
        const size_t to = run < runCount ? (size_t)runs[2 * run] : count;
        if (to < from || to > count) return SIZE_MAX;
        const size_t kept = to - from;
        if (kept > 64 || to + 16 > count) {
            // A long string (libc's copy takes it faster), or the document's last bytes.
            memcpy(destination + length, source + from, kept);
        } else {
            // A line or a member: sixteen bytes at a time, the last chunk stored whole.
            for (size_t offset = 0; offset < kept; offset += 16) memcpy(destination + length + offset, source + from + offset, 16);
        }
        length += kept;
        if (run < runCount) from = (size_t)runs[2 * run + 1];
    }
    return length;
}

#endif
