// CRC-32C (Castagnoli), reflected, initial value and final XOR 0xFFFFFFFF: the checksum of every log record.
//
// In C because Swift cannot emit the CRC32 instruction, which does eight bytes in about a cycle; the table form,
// which Chorus computed in Swift before, took about 1.5 cycles a byte (1.7 % of an import's CPU).

#include "crc32c.h"

#include <string.h>

static uint32_t table[256];
static int uses_instruction;

// Run before main, so that no call ever races the table or the CPU check.
__attribute__((constructor)) static void set_up(void) {
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = byte;
        for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0);
        table[byte] = crc;
    }
#if defined(__x86_64__)
    __builtin_cpu_init();
    uses_instruction = __builtin_cpu_supports("sse4.2");
#endif
}

int chorus_crc32c_uses_instruction(void) { return uses_instruction; }

uint32_t chorus_crc32c_portable(const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    uint32_t crc = 0xFFFFFFFFu;
    while (count-- > 0) crc = (crc >> 8) ^ table[(crc ^ *next++) & 0xFF];
    return ~crc;
}

#if defined(__x86_64__)

__attribute__((target("sse4.2"))) static uint32_t crc32c_instruction(const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    uint64_t crc = 0xFFFFFFFFu;
    for (; count >= 8; next += 8, count -= 8) {
        uint64_t word;
        memcpy(&word, next, 8);
        crc = __builtin_ia32_crc32di(crc, word);
    }
    uint32_t low = (uint32_t)crc;
    for (; count > 0; next++, count--) low = __builtin_ia32_crc32qi(low, *next);
    return ~low;
}

uint32_t chorus_crc32c(const void *bytes, size_t count) {
    return uses_instruction ? crc32c_instruction(bytes, count) : chorus_crc32c_portable(bytes, count);
}

#else

uint32_t chorus_crc32c(const void *bytes, size_t count) { return chorus_crc32c_portable(bytes, count); }

#endif
