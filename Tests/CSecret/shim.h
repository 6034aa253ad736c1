// libsecret, including the D-Bus path functions (secret-paths.h) that need this opt-in: they let
// sortedvault read a collection's lock state fresh instead of from a proxy's stale property cache.
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
