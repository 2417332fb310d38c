#define _GNU_SOURCE
#include "chorus_file_calls.h"

#include <errno.h>
#include <fcntl.h>

int chorus_start_write_back(int descriptor) {
#ifdef __linux__
    // Offset 0 and length 0: the whole file, whatever its length.
    return sync_file_range(descriptor, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
    (void)descriptor;
    return 0;
#endif
}

int chorus_allocate_keeping_size(int descriptor, long long offset, long long length) {
#ifdef __linux__
    if (fallocate(descriptor, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length) == 0) return 0;
    return errno;
#else
    (void)descriptor;
    (void)offset;
    (void)length;
    return EOPNOTSUPP;
#endif
}
