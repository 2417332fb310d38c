#ifndef CHORUS_CRC32C_H
#define CHORUS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli) of `count` bytes: with the CPU's CRC32 instruction where it has one (SSE 4.2 on x86-64),
/// else with a table. The same value either way.
uint32_t chorus_crc32c(const void *bytes, size_t count);

/// The table-driven form alone, whatever the CPU: what the instruction's answers are checked against.
uint32_t chorus_crc32c_portable(const void *bytes, size_t count);

/// Whether chorus_crc32c uses the CPU's instruction on this machine.
int chorus_crc32c_uses_instruction(void);

#endif
