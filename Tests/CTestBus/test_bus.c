// Where this test process's own GLib finds its session bus, decided before main.
//
// GLib reads the session bus's address from the environment when it first connects. Setting
// DBUS_SESSION_BUS_ADDRESS then, in a process whose other threads spawn children, races with every
// posix_spawn reading the environment (a crash seen in CI: memcpy in Process.run), and every child
// would inherit the test keyring. So the environment is changed here only, while there is one thread:
// - DBUS_SESSION_BUS_ADDRESS is removed, so neither this process nor its children reach the
//   desktop session's bus (and keyring) by accident;
// - GLib's user runtime directory, which it reads once and keeps, is made a private directory whose
//   `bus` socket is GLib's session bus when no address is set. The shared test keyring's bus listens
//   there (SharedKeyring); XDG_RUNTIME_DIR itself is put back for the children.
#include "CTestBus.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char directory[64];
static int made;

static void removeDirectory(void) {
    char bus[96];
    snprintf(bus, sizeof bus, "%s/bus", directory);
    unlink(bus);
    rmdir(directory);
}

__attribute__((constructor)) static void decideTheTestBus(void) {
    unsetenv("DBUS_SESSION_BUS_ADDRESS");
    const char *temporary = getenv("TMPDIR");
    if (temporary == NULL || temporary[0] == '\0' || strlen(temporary) > 32) temporary = "/tmp";
    snprintf(directory, sizeof directory, "%s/sv-bus-XXXXXX", temporary);
    if (mkdtemp(directory) == NULL) return;
    const char *previous = getenv("XDG_RUNTIME_DIR");
    char *saved = previous ? strdup(previous) : NULL;
    setenv("XDG_RUNTIME_DIR", directory, 1);
    (void)g_get_user_runtime_dir();
    if (saved) {
        setenv("XDG_RUNTIME_DIR", saved, 1);
        free(saved);
    } else {
        unsetenv("XDG_RUNTIME_DIR");
    }
    made = 1;
    atexit(removeDirectory);
}

const char *sortedvault_test_bus_directory(void) { return made ? directory : NULL; }
