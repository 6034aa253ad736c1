#ifndef SORTEDVAULT_CLINUXSHIMS_H
#define SORTEDVAULT_CLINUXSHIMS_H

#include <spawn.h>

/// prctl(2) is variadic, which Swift cannot call; these wrap the two uses the daemon has.

/// prctl(PR_SET_DUMPABLE, 0): no core dumps, no same-uid ptrace, /proc/PID owned by root.
int sortedvault_set_nondumpable(void);

/// prctl(PR_GET_DUMPABLE): 0 when non-dumpable.
int sortedvault_get_dumpable(void);

/// POSIX_SPAWN_SETSID (a GNU extension Swift's Glibc module does not export): the spawned
/// process starts a new session, so it outlives the terminal of the command that started it.
short sortedvault_posix_spawn_setsid(void);

/// posix_spawn_file_actions_addclosefrom_np(actions, from) (glibc 2.34, a GNU extension Swift's
/// Glibc module does not export): the child closes every descriptor from `from` up, so it inherits
/// only the ones the actions set up (a socket or pipe of the parent's, open in a long-lived child,
/// would never reach end-of-file). Returns 0 or an errno value.
int sortedvault_posix_spawn_closefrom(posix_spawn_file_actions_t *actions, int from);

/// malloc_trim(0) (glibc's <malloc.h>, which Swift's Glibc module does not export): gives the free
/// pages inside every malloc arena back to the kernel. Returns 1 when memory was released.
int sortedvault_malloc_trim(void);

/// Unmaps the pages of every loaded object's read-only segments (code, constants, Swift metadata:
/// the ELF PT_LOAD segments without write permission) from this process, with
/// madvise(MADV_DONTNEED). They are never written, so each is exactly its file's page: they stay
/// in the page cache, and a page used again is mapped again on its next access, by a minor fault.
/// What start-up alone used then no longer counts in the process's resident memory. Objects with
/// text relocations (DT_TEXTREL, DF_TEXTREL), whose code pages may have been written, and the
/// vDSO are skipped. Returns the bytes of address space advised.
unsigned long sortedvault_release_code_pages(void);

#endif
