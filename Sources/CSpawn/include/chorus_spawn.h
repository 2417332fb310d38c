#ifndef CHORUS_SPAWN_H
#define CHORUS_SPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (both ending in NULL) as a child of this process, with posix_spawn: its
/// standard input, output and error are `input`, `output` and `error` (-1: this process's own), every other
/// descriptor of this process closed in it, its signal mask empty and every signal at its default, and its working
/// directory `directory` (NULL: this process's). Sets `*pid`; returns 0, or the error number.
///
int chorus_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *directory,
                 int input, int output, int error);

/// A pipe whose two ends are close-on-exec from the start (pipe2 with O_CLOEXEC); returns 0, or -1 with errno set.
int chorus_pipe(int ends[2]);

// In C because glibc declares posix_spawn_file_actions_addclosefrom_np, _addchdir_np and pipe2 only under
// _GNU_SOURCE, which Swift's Glibc module does not define.

#endif
