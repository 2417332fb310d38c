#ifndef CHORUS_WRITE_BACK_H
#define CHORUS_WRITE_BACK_H

/// Starts the disk's write-back of every dirty page of the file open as `descriptor`, without waiting for it to end
/// (Linux's sync_file_range with SYNC_FILE_RANGE_WRITE: pages already being written are left to it). Returns 0, or -1
/// with errno set; elsewhere than on Linux, does nothing and returns 0.
int chorus_start_write_back(int descriptor);

// In C because glibc declares sync_file_range only under _GNU_SOURCE, which Swift's Glibc module does not define.

#endif
