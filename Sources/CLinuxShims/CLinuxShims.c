#define _GNU_SOURCE
#include "CLinuxShims.h"
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <spawn.h>
#include <sys/prctl.h>

int sortedvault_set_nondumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int sortedvault_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }

short sortedvault_posix_spawn_setsid(void) { return POSIX_SPAWN_SETSID; }

int sortedvault_posix_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int sortedvault_malloc_trim(void) { return malloc_trim(0); }

static int has_text_relocations(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (; dyn->d_tag != DT_NULL; dyn++) {
            if (dyn->d_tag == DT_TEXTREL) return 1;
            if (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_TEXTREL)) return 1;
        }
    }
    return 0;
}

/// Whether `segment` shares an address with the object's RELRO region (written by the dynamic
/// linker, then made read-only): never the case for a linker's read-only segments, checked anyway.
static int overlaps_relro(const struct dl_phdr_info *info, const ElfW(Phdr) *segment) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *relro = &info->dlpi_phdr[i];
        if (relro->p_type != PT_GNU_RELRO) continue;
        if (segment->p_vaddr < relro->p_vaddr + relro->p_memsz && relro->p_vaddr < segment->p_vaddr + segment->p_memsz) return 1;
    }
    return 0;
}

static int release_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    unsigned long *released = data;
    const char *name = info->dlpi_name;
    // The main program comes first, named ""; libraries by path; anything else (the vDSO) is not a file.
    int is_program = released[1] == 0;
    released[1] = 1;
    if (!is_program && (name == NULL || name[0] != '/')) return 0;
    if (has_text_relocations(info)) return 0;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W) || overlaps_relro(info, segment)) continue;
        // Whole pages only, inside the segment: a page shared with a writable neighbour is kept.
        uintptr_t start = (info->dlpi_addr + segment->p_vaddr + page - 1) & ~(page - 1);
        uintptr_t end = (info->dlpi_addr + segment->p_vaddr + segment->p_memsz) & ~(page - 1);
        if (end <= start) continue;
        if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) released[0] += end - start;
    }
    return 0;
}

unsigned long sortedvault_release_code_pages(void) {
    unsigned long released[2] = {0, 0};  // bytes advised; whether the main program was seen
    dl_iterate_phdr(release_object, released);
    return released[0];
}
