#include "CSecretLoader.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Every function of CSecretLoader.h: F(return type, name, parameters, arguments) or, for the ones
// returning void, V(name, parameters, arguments).
#define SV_FUNCTIONS(F, V) \
    V(g_free, (gpointer mem), (mem)) \
    F(gchar *, g_strdup, (const gchar *str), (str)) \
    V(g_strfreev, (gchar **str_array), (str_array)) \
    V(g_error_free, (GError *error), (error)) \
    F(guint, g_str_hash, (gconstpointer v), (v)) \
    F(gboolean, g_str_equal, (gconstpointer v1, gconstpointer v2), (v1, v2)) \
    F(GHashTable *, g_hash_table_new_full, (GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func, \
      GDestroyNotify value_destroy_func), (hash_func, key_equal_func, key_destroy_func, value_destroy_func)) \
    F(gboolean, g_hash_table_insert, (GHashTable *hash_table, gpointer key, gpointer value), (hash_table, key, value)) \
    V(g_hash_table_iter_init, (GHashTableIter *iter, GHashTable *hash_table), (iter, hash_table)) \
    F(gboolean, g_hash_table_iter_next, (GHashTableIter *iter, gpointer *key, gpointer *value), (iter, key, value)) \
    V(g_hash_table_unref, (GHashTable *hash_table), (hash_table)) \
    V(g_object_unref, (gpointer object), (object)) \
    F(SVGVariantClass, g_variant_classify, (GVariant *value), (value)) \
    F(gboolean, g_variant_get_boolean, (GVariant *value), (value)) \
    F(GVariant *, g_variant_get_child_value, (GVariant *value, gsize index_), (value, index_)) \
    F(GVariant *, g_variant_get_variant, (GVariant *value), (value)) \
    F(GVariant *, g_variant_new_string, (const gchar *string), (string)) \
    F(GVariant *, g_variant_new_tuple, (GVariant *const *children, gsize n_children), (children, n_children)) \
    V(g_variant_unref, (GVariant *value), (value)) \
    F(GDBusConnection *, g_bus_get_sync, (SVGBusType bus_type, GCancellable *cancellable, GError **error), \
      (bus_type, cancellable, error)) \
    F(GVariant *, g_dbus_connection_call_sync, (GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, \
      const gchar *interface_name, const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, \
      SVGDBusCallFlags flags, gint timeout_msec, GCancellable *cancellable, GError **error), \
      (connection, bus_name, object_path, interface_name, method_name, parameters, reply_type, flags, timeout_msec, \
       cancellable, error)) \
    F(gchar *, g_dbus_error_get_remote_error, (const GError *error), (error)) \
    F(gboolean, g_dbus_error_is_remote_error, (const GError *error), (error)) \
    F(GQuark, g_dbus_error_quark, (void), ()) \
    F(gboolean, g_dbus_error_strip_remote_error, (GError *error), (error)) \
    F(GDBusConnection *, g_dbus_proxy_get_connection, (SVGDBusProxy *proxy), (proxy)) \
    F(const gchar *, g_dbus_proxy_get_name, (SVGDBusProxy *proxy), (proxy)) \
    F(const gchar *, g_dbus_proxy_get_object_path, (SVGDBusProxy *proxy), (proxy)) \
    F(GQuark, g_io_error_quark, (void), ()) \
    F(SVSecretCollection *, secret_collection_new_for_dbus_path_sync, (SVSecretService *service, const gchar *collection_path, \
      SVSecretCollectionFlags flags, GCancellable *cancellable, GError **error), \
      (service, collection_path, flags, cancellable, error)) \
    F(GQuark, secret_error_get_quark, (void), ()) \
    F(SVSecretItem *, secret_item_create_sync, (SVSecretCollection *collection, const SVSecretSchema *schema, GHashTable *attributes, \
      const gchar *label, SecretValue *value, SVSecretItemCreateFlags flags, GCancellable *cancellable, GError **error), \
      (collection, schema, attributes, label, value, flags, cancellable, error)) \
    F(GHashTable *, secret_item_get_attributes, (SVSecretItem *self), (self)) \
    F(guint64, secret_item_get_created, (SVSecretItem *self), (self)) \
    F(gchar *, secret_item_get_label, (SVSecretItem *self), (self)) \
    F(guint64, secret_item_get_modified, (SVSecretItem *self), (self)) \
    F(SVSecretItem *, secret_item_new_for_dbus_path_sync, (SVSecretService *service, const gchar *item_path, SVSecretItemFlags flags, \
      GCancellable *cancellable, GError **error), (service, item_path, flags, cancellable, error)) \
    F(SVSecretSchema *, secret_schema_newv, (const gchar *name, SVSecretSchemaFlags flags, GHashTable *attribute_names_and_types), \
      (name, flags, attribute_names_and_types)) \
    F(gboolean, secret_service_delete_item_dbus_path_sync, (SVSecretService *self, const gchar *item_path, \
      GCancellable *cancellable, GError **error), (self, item_path, cancellable, error)) \
    V(secret_service_disconnect, (void), ()) \
    F(GHashTable *, secret_service_get_secrets_for_dbus_paths_sync, (SVSecretService *self, const gchar **item_paths, \
      GCancellable *cancellable, GError **error), (self, item_paths, cancellable, error)) \
    F(SVSecretService *, secret_service_get_sync, (SVSecretServiceFlags flags, GCancellable *cancellable, GError **error), \
      (flags, cancellable, error)) \
    F(gint, secret_service_lock_dbus_paths_sync, (SVSecretService *self, const gchar **paths, GCancellable *cancellable, \
      gchar ***locked, GError **error), (self, paths, cancellable, locked, error)) \
    F(gchar *, secret_service_read_alias_dbus_path_sync, (SVSecretService *self, const gchar *alias, GCancellable *cancellable, \
      GError **error), (self, alias, cancellable, error)) \
    F(gboolean, secret_service_search_for_dbus_paths_sync, (SVSecretService *self, const SVSecretSchema *schema, \
      GHashTable *attributes, GCancellable *cancellable, gchar ***unlocked, gchar ***locked, GError **error), \
      (self, schema, attributes, cancellable, unlocked, locked, error)) \
    F(const gchar *, secret_value_get, (SecretValue *value, gsize *length), (value, length)) \
    F(SecretValue *, secret_value_new_full, (gchar *secret, gssize length, const gchar *content_type, GDestroyNotify destroy), \
      (secret, length, content_type, destroy)) \
    V(secret_value_unref, (gpointer value), (value))

// A call before sortedvault_secret_load succeeded is a bug in the caller (VaultSecretService calls
// only through SecretServiceCalls, which loads first): stop with its name rather than jump to address 0.
static void notLoaded(const char *name) {
    fprintf(stderr, "sortedvault: %s called before libsecret was loaded\n", name);
    abort();
}

#define SV_DEFINE(ret, name, params, args) \
    static ret(*p_##name) params; \
    ret sv_##name params { \
        if (p_##name == NULL) notLoaded(#name); \
        return p_##name args; \
    }
#define SV_DEFINE_VOID(name, params, args) \
    static void(*p_##name) params; \
    void sv_##name params { \
        if (p_##name == NULL) notLoaded(#name); \
        p_##name args; \
    }
SV_FUNCTIONS(SV_DEFINE, SV_DEFINE_VOID)

#define SV_ENTRY(ret, name, params, args) {#name, (void **)&p_##name},
#define SV_ENTRY_VOID(name, params, args) {#name, (void **)&p_##name},
static const struct {
    const char *name;
    void **slot;
} functions[] = {SV_FUNCTIONS(SV_ENTRY, SV_ENTRY_VOID)};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -1;
static char failure[512];

static void load(void) {
    // RTLD_LOCAL: nothing of libsecret or GLib joins the global symbol scope; each function is taken
    // from this handle (which also searches the libraries it depends on, GIO and GLib).
    void *handle = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "%s", reason ? reason : "libsecret-1.so.0 could not be loaded");
        return;
    }
    for (size_t index = 0; index < sizeof functions / sizeof functions[0]; index++) {
        dlerror();
        void *address = dlsym(handle, functions[index].name);
        if (address == NULL) {
            snprintf(failure, sizeof failure, "libsecret-1.so.0 has no %s", functions[index].name);
            return;  // the handle stays open: some pointers are set, and nothing calls them (loaded is -1)
        }
        *functions[index].slot = address;
    }
    loaded = 0;
}

int sortedvault_secret_load(char *reason, size_t reasonSize) {
    pthread_once(&once, load);
    if (loaded != 0 && reason != NULL && reasonSize > 0) snprintf(reason, reasonSize, "%s", failure);
    return loaded;
}
