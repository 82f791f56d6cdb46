/* ipc/crc32c.h: CRC-32C (Castagnoli), as used by iSCSI, ext4 and our frames.
 * Uses the SSE4.2 crc32 instruction when the CPU has it, a table otherwise. */
#ifndef EJOB_CRC32C_H
#define EJOB_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: start with crc32c_extend(0, ...); crc32c_extend(crc32c_extend(0, a), b)
 * equals the CRC of a followed by b. crc32c("123456789") == 0xe3069283. */
uint32_t crc32c_extend(uint32_t crc, const void *buf, size_t len);

/* The table implementation, for tests to compare with the hardware one. */
uint32_t crc32c_extend_sw(uint32_t crc, const void *buf, size_t len);

#endif
