#define _GNU_SOURCE
#include "chorus_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

int chorus_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *directory,
                 int input, int output, int error) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    const int standard[3] = {input, output, error};
    for (int target = 0; target < 3 && result == 0; target++) {
        if (standard[target] >= 0) result = posix_spawn_file_actions_adddup2(&actions, standard[target], target);
    }
    // Descriptors this process opened without close-on-exec (by other threads, at any moment) must not leak: a pipe's
    // write end held by a long-lived child keeps another child's reader from ever seeing the end of its output.
    if (result == 0) result = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (result == 0 && directory != NULL) result = posix_spawn_file_actions_addchdir_np(&actions, directory);

    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (result == 0) result = posix_spawnattr_setsigmask(&attributes, &none);
    if (result == 0) result = posix_spawnattr_setsigdefault(&attributes, &all);
    if (result == 0) result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (result == 0) result = posix_spawn(pid, path, &actions, &attributes, argv, envp);

    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

int chorus_pipe(int ends[2]) { return pipe2(ends, O_CLOEXEC); }
