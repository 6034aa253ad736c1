#ifndef SORTEDVAULT_CSECRETLOADER_H
#define SORTEDVAULT_CSECRETLOADER_H

// libsecret, GIO and GLib for the desktop keyring, loaded with dlopen by the first keyring call, so a
// daemon that never uses the keyring maps neither libsecret nor the dozen libraries it pulls in
// (docs/speed.md, "libsecret on demand"). Only what VaultSecretService calls is declared:
// - GLib's plain types and the structures a caller allocates (GError, GHashTableIter), exactly as
//   GLib defines them;
// - the GObject types that only travel behind pointers, and the enums, under `SV` names: a program
//   that also imports libsecret's own headers (the keyring tests) must not see two definitions;
// - one `sv_` function per libsecret, GIO or GLib function used, which calls it through a pointer
//   that `sortedvault_secret_load` resolved (and stops, naming it, if called before).
// The values and prototypes are libsecret 0.20's and GLib 2.74's (Debian 12); `sortedvault_secret_load`
// refuses a library that lacks any of the functions.

#include <stddef.h>
#include <stdint.h>

typedef char gchar;
typedef int gint;
typedef unsigned int guint;
typedef gint gboolean;
typedef unsigned long gsize;
typedef signed long gssize;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef uint32_t GQuark;
typedef uint64_t guint64;

typedef struct _GError {
    GQuark domain;
    gint code;
    gchar *message;
} GError;

typedef struct _GHashTable GHashTable;
/// GLib's layout: stack-allocated by the caller, filled by g_hash_table_iter_init.
typedef struct _GHashTableIter {
    gpointer dummy1;
    gpointer dummy2;
    gpointer dummy3;
    int dummy4;
    gboolean dummy5;
    gpointer dummy6;
} GHashTableIter;
typedef guint (*GHashFunc)(gconstpointer key);
typedef gboolean (*GEqualFunc)(gconstpointer a, gconstpointer b);
typedef void (*GDestroyNotify)(gpointer data);

typedef struct _GVariant GVariant;
typedef struct _GVariantType GVariantType;
typedef struct _GCancellable GCancellable;
typedef struct _GDBusConnection GDBusConnection;
// GObject types used only behind pointers: one placeholder member, so that Swift names the type.
typedef struct _SVGDBusProxy { char placeholder; } SVGDBusProxy;
typedef struct _SVSecretService { char placeholder; } SVSecretService;
typedef struct _SVSecretItem { char placeholder; } SVSecretItem;
typedef struct _SVSecretCollection { char placeholder; } SVSecretCollection;
typedef struct _SVSecretSchema { char placeholder; } SVSecretSchema;
typedef struct _SecretValue SecretValue;

typedef enum { SV_G_BUS_TYPE_SESSION = 2 } SVGBusType;
typedef enum { SV_G_DBUS_CALL_FLAGS_NONE = 0 } SVGDBusCallFlags;
typedef enum { SV_G_DBUS_ERROR_SERVICE_UNKNOWN = 2 } SVGDBusError;
typedef enum {
    SV_G_IO_ERROR_CLOSED = 18,
    SV_G_IO_ERROR_TIMED_OUT = 24,
    SV_G_IO_ERROR_BROKEN_PIPE = 44,
    SV_G_IO_ERROR_CONNECTION_CLOSED = 44,
} SVGIOErrorEnum;
typedef enum { SV_G_VARIANT_CLASS_BOOLEAN = 'b' } SVGVariantClass;
typedef enum { SV_SECRET_SERVICE_OPEN_SESSION = 1 << 1 } SVSecretServiceFlags;
typedef enum { SV_SECRET_SCHEMA_NONE = 0, SV_SECRET_SCHEMA_DONT_MATCH_NAME = 1 << 1 } SVSecretSchemaFlags;
typedef enum { SV_SECRET_SCHEMA_ATTRIBUTE_STRING = 0 } SVSecretSchemaAttributeType;
typedef enum { SV_SECRET_ITEM_NONE = 0 } SVSecretItemFlags;
typedef enum { SV_SECRET_COLLECTION_NONE = 0 } SVSecretCollectionFlags;
typedef enum { SV_SECRET_ITEM_CREATE_NONE = 0 } SVSecretItemCreateFlags;
typedef enum { SV_SECRET_ERROR_IS_LOCKED = 2 } SVSecretError;

/// Loads libsecret (libsecret-1.so.0) and resolves every function below, once per process. Returns 0
/// when they are all there; otherwise -1, with the reason (dlerror's text) in `reason`.
int sortedvault_secret_load(char *reason, size_t reasonSize);

// GLib
void sv_g_free(gpointer mem);
gchar *sv_g_strdup(const gchar *str);
void sv_g_strfreev(gchar **str_array);
void sv_g_error_free(GError *error);
guint sv_g_str_hash(gconstpointer v);
gboolean sv_g_str_equal(gconstpointer v1, gconstpointer v2);
GHashTable *sv_g_hash_table_new_full(GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func,
                                     GDestroyNotify value_destroy_func);
gboolean sv_g_hash_table_insert(GHashTable *hash_table, gpointer key, gpointer value);
void sv_g_hash_table_iter_init(GHashTableIter *iter, GHashTable *hash_table);
gboolean sv_g_hash_table_iter_next(GHashTableIter *iter, gpointer *key, gpointer *value);
void sv_g_hash_table_unref(GHashTable *hash_table);
void sv_g_object_unref(gpointer object);
SVGVariantClass sv_g_variant_classify(GVariant *value);
gboolean sv_g_variant_get_boolean(GVariant *value);
GVariant *sv_g_variant_get_child_value(GVariant *value, gsize index_);
GVariant *sv_g_variant_get_variant(GVariant *value);
GVariant *sv_g_variant_new_string(const gchar *string);
GVariant *sv_g_variant_new_tuple(GVariant *const *children, gsize n_children);
void sv_g_variant_unref(GVariant *value);

// GIO
GDBusConnection *sv_g_bus_get_sync(SVGBusType bus_type, GCancellable *cancellable, GError **error);
GVariant *sv_g_dbus_connection_call_sync(GDBusConnection *connection, const gchar *bus_name, const gchar *object_path,
                                         const gchar *interface_name, const gchar *method_name, GVariant *parameters,
                                         const GVariantType *reply_type, SVGDBusCallFlags flags, gint timeout_msec,
                                         GCancellable *cancellable, GError **error);
gchar *sv_g_dbus_error_get_remote_error(const GError *error);
gboolean sv_g_dbus_error_is_remote_error(const GError *error);
GQuark sv_g_dbus_error_quark(void);
gboolean sv_g_dbus_error_strip_remote_error(GError *error);
GDBusConnection *sv_g_dbus_proxy_get_connection(SVGDBusProxy *proxy);
const gchar *sv_g_dbus_proxy_get_name(SVGDBusProxy *proxy);
const gchar *sv_g_dbus_proxy_get_object_path(SVGDBusProxy *proxy);
GQuark sv_g_io_error_quark(void);

// libsecret
SVSecretCollection *sv_secret_collection_new_for_dbus_path_sync(SVSecretService *service, const gchar *collection_path,
                                                              SVSecretCollectionFlags flags, GCancellable *cancellable,
                                                              GError **error);
GQuark sv_secret_error_get_quark(void);
SVSecretItem *sv_secret_item_create_sync(SVSecretCollection *collection, const SVSecretSchema *schema, GHashTable *attributes,
                                       const gchar *label, SecretValue *value, SVSecretItemCreateFlags flags,
                                       GCancellable *cancellable, GError **error);
GHashTable *sv_secret_item_get_attributes(SVSecretItem *self);
guint64 sv_secret_item_get_created(SVSecretItem *self);
gchar *sv_secret_item_get_label(SVSecretItem *self);
guint64 sv_secret_item_get_modified(SVSecretItem *self);
SVSecretItem *sv_secret_item_new_for_dbus_path_sync(SVSecretService *service, const gchar *item_path, SVSecretItemFlags flags,
                                                  GCancellable *cancellable, GError **error);
SVSecretSchema *sv_secret_schema_newv(const gchar *name, SVSecretSchemaFlags flags, GHashTable *attribute_names_and_types);
gboolean sv_secret_service_delete_item_dbus_path_sync(SVSecretService *self, const gchar *item_path, GCancellable *cancellable,
                                                      GError **error);
void sv_secret_service_disconnect(void);
GHashTable *sv_secret_service_get_secrets_for_dbus_paths_sync(SVSecretService *self, const gchar **item_paths,
                                                              GCancellable *cancellable, GError **error);
SVSecretService *sv_secret_service_get_sync(SVSecretServiceFlags flags, GCancellable *cancellable, GError **error);
gint sv_secret_service_lock_dbus_paths_sync(SVSecretService *self, const gchar **paths, GCancellable *cancellable,
                                            gchar ***locked, GError **error);
gchar *sv_secret_service_read_alias_dbus_path_sync(SVSecretService *self, const gchar *alias, GCancellable *cancellable,
                                                   GError **error);
gboolean sv_secret_service_search_for_dbus_paths_sync(SVSecretService *self, const SVSecretSchema *schema, GHashTable *attributes,
                                                      GCancellable *cancellable, gchar ***unlocked, gchar ***locked,
                                                      GError **error);
const gchar *sv_secret_value_get(SecretValue *value, gsize *length);
SecretValue *sv_secret_value_new_full(gchar *secret, gssize length, const gchar *content_type, GDestroyNotify destroy);
void sv_secret_value_unref(gpointer value);

#endif
