#ifndef SORTEDVAULT_CLINUXSHIMS_H
#define SORTEDVAULT_CLINUXSHIMS_H

/// prctl(2) is variadic, which Swift cannot call; these wrap the two uses the daemon has.

/// prctl(PR_SET_DUMPABLE, 0): no core dumps, no same-uid ptrace, /proc/PID owned by root.
int sortedvault_set_nondumpable(void);

/// prctl(PR_GET_DUMPABLE): 0 when non-dumpable.
int sortedvault_get_dumpable(void);

/// POSIX_SPAWN_SETSID (a GNU extension Swift's Glibc module does not export): the spawned
/// process starts a new session, so it outlives the terminal of the command that started it.
short sortedvault_posix_spawn_setsid(void);

/// malloc_trim(0) (glibc's <malloc.h>, which Swift's Glibc module does not export): gives the free
/// pages inside every malloc arena back to the kernel. Returns 1 when memory was released.
int sortedvault_malloc_trim(void);

#endif
