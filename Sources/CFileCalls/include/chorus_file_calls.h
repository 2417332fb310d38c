#ifndef CHORUS_FILE_CALLS_H
#define CHORUS_FILE_CALLS_H

/// Starts the disk's write-back of every dirty page of the file open as `descriptor`, without waiting for it to end
/// (Linux's sync_file_range with SYNC_FILE_RANGE_WRITE: pages already being written are left to it). Returns 0, or -1
/// with errno set; elsewhere than on Linux, does nothing and returns 0.
int chorus_start_write_back(int descriptor);

/// Allocates the disk blocks of bytes `offset` to `offset + length` of the file open as `descriptor` without changing
/// its size, even past its end (Linux's fallocate with FALLOC_FL_KEEP_SIZE). Returns 0, or an errno value: ENOSPC when
/// the disk has no room, EOPNOTSUPP where the file system cannot (and always elsewhere than on Linux).
int chorus_allocate_keeping_size(int descriptor, long long offset, long long length);

// In C because glibc declares sync_file_range and fallocate only under _GNU_SOURCE, which Swift's Glibc module does
// not define.

#endif
