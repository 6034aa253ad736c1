#ifndef SORTEDVAULT_C_TEST_BUS_H
#define SORTEDVAULT_C_TEST_BUS_H

/// The private directory where the test process's GLib looks for its session bus (`DIR/bus`): set
/// once, before main, while the process has one thread. NULL when it could not be made.
const char *sortedvault_test_bus_directory(void);

#endif
