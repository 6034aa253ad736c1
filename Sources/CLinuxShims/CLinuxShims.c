#define _GNU_SOURCE
#include "CLinuxShims.h"
#include <malloc.h>
#include <spawn.h>
#include <sys/prctl.h>

int sortedvault_set_nondumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int sortedvault_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

short sortedvault_posix_spawn_setsid(void) { return POSIX_SPAWN_SETSID; }

int sortedvault_posix_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int sortedvault_malloc_trim(void) { return malloc_trim(0); }
