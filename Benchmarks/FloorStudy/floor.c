// The floor study of docs/speed.md: the least work a sortedvault Retrieve must do under the
// project's security rules, written in plain C as one thread around epoll, with no allocation per
// request, so that `scripts/floor-study` can measure it against ssh-agent with the same client as
// the daemon. It is a measuring stick, not a server: it answers only Retrieve-shaped requests for the
// one item it seeds, assumes a reply fits the socket buffer, and has no limits, policy files or
// error handling worth the name. Never ship or install it.
//
// Per connection (as the daemon does at accept): SO_PEERCRED; readlink and stat of /proc/PID/exe;
// one read of /proc/PID/status (the supplementary groups).
// Per call, in the daemon's order: the re-check of the peer's executable (readlink + stat of
// /proc/PID/exe, the bytes and the file compared); the service and account found in the request;
// the item's lookup key (keyed BLAKE2b); one read transaction of SQLite in WAL mode that reads the
// vault's authenticated state row and the item's row; the state's tag verified; the sealed metadata
// and the sealed secret opened (secretbox); one access-log line appended; the reply written with the
// secret in base64; the plaintext wiped.
//
// Switches take parts away, one at a time, to show what each costs:
//   --recheck full|stat|none   full (default): readlink + stat; stat: one fstatat on a /proc/PID
//                              directory descriptor opened at accept, comparing device, inode and
//                              link count only; none: no per-call re-check
//   --no-state                 no state row, no tag check
//   --no-store                 the item's sealed row from memory after the first read (no SQLite)
//   --no-crypto                no secretbox opens
//   --no-log                   no access-log line
//   --log-batched              the access-log line kept in memory and written with the others in
//                              one write within 100 ms (a log written off the request path, in order)
//   --spin MICROSECONDS        that much busy work added between reading a request and answering it
//                              (no other work is taken away by it)
//
// Build: cc -O2 floor.c $(pkg-config --cflags --libs libsodium sqlite3)
// Usage: floor SOCKET DATABASE LOG [switches]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum recheck_kind { RECHECK_FULL, RECHECK_STAT, RECHECK_NONE };
static enum recheck_kind recheck_kind = RECHECK_FULL;
static int with_state = 1, with_store = 1, with_crypto = 1, with_log = 1, log_batched = 0;
static int log_fd;
// The batched log: lines not yet written, and when the first of them was added.
static char log_pending[65536];
static size_t log_pending_length;
static struct timespec log_pending_since;

static long milliseconds_since(const struct timespec *then) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - then->tv_sec) * 1000L + (now.tv_nsec - then->tv_nsec) / 1000000L;
}

static void flush_log(void) {
    if (log_pending_length == 0) return;
    (void)!write(log_fd, log_pending, log_pending_length);
    log_pending_length = 0;
}
static long spin_ns;

typedef struct {
    int fd, proc_dir;
    pid_t pid;
    uid_t uid;
    char link_path[64];
    char exe[4096];
    ssize_t exe_length;
    dev_t exe_device;
    ino_t exe_inode;
    size_t used;
    char buffer[65536];
} connection;

static sqlite3 *db;
static sqlite3_stmt *begin_read, *read_state, *read_item, *end_read;
static unsigned char vault_key[crypto_secretbox_KEYBYTES], state_key[crypto_auth_KEYBYTES];
static unsigned char kept_metadata[512], kept_secret[2048];
static int kept_metadata_length, kept_secret_length, kept;

static void fail(const char *what) {
    fprintf(stderr, "floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : strerror(errno));
    exit(1);
}

static void lookup_key(const char *service, size_t service_length, const char *account, size_t account_length,
                       unsigned char out[32]) {
    crypto_generichash_state hash;
    crypto_generichash_init(&hash, vault_key, sizeof vault_key, 32);
    crypto_generichash_update(&hash, (const unsigned char *)service, service_length);
    crypto_generichash_update(&hash, (const unsigned char *)"", 1);
    crypto_generichash_update(&hash, (const unsigned char *)account, account_length);
    crypto_generichash_final(&hash, out, 32);
}

static void seal(const unsigned char *plain, size_t length, unsigned char *out) {
    randombytes_buf(out, crypto_secretbox_NONCEBYTES);
    crypto_secretbox_easy(out + crypto_secretbox_NONCEBYTES, plain, length, out, vault_key);
}

static void seed(const char *path) {
    if (sqlite3_open(path, &db) != SQLITE_OK) fail("open");
    const char *schema =
        "PRAGMA journal_mode=WAL;"
        "CREATE TABLE vault_state(id INTEGER PRIMARY KEY, generation INTEGER, count INTEGER, tag BLOB);"
        "CREATE TABLE items(id INTEGER PRIMARY KEY, lookup BLOB UNIQUE, revision INTEGER, expires_at REAL,"
        " metadata BLOB, secret BLOB);";
    if (sqlite3_exec(db, schema, 0, 0, 0) != SQLITE_OK) fail("schema");
    unsigned char lookup[32], plain[1024], metadata[24 + 16 + 200], secret[24 + 16 + 1024], tag[crypto_auth_BYTES];
    lookup_key("bench", 5, "token", 5, lookup);
    memset(plain, 0x41, sizeof plain);
    seal(plain, 200, metadata);
    seal(plain, 1024, secret);
    unsigned char state[16] = {1, 0, 0, 0, 0, 0, 0, 0, 1};
    crypto_auth(tag, state, sizeof state, state_key);
    sqlite3_stmt *insert;
    sqlite3_prepare_v2(db, "INSERT INTO vault_state VALUES (1, 1, 1, ?)", -1, &insert, 0);
    sqlite3_bind_blob(insert, 1, tag, sizeof tag, SQLITE_TRANSIENT);
    if (sqlite3_step(insert) != SQLITE_DONE) fail("seed state");
    sqlite3_finalize(insert);
    sqlite3_prepare_v2(db, "INSERT INTO items (lookup, revision, metadata, secret) VALUES (?, 1, ?, ?)", -1, &insert, 0);
    sqlite3_bind_blob(insert, 1, lookup, sizeof lookup, SQLITE_TRANSIENT);
    sqlite3_bind_blob(insert, 2, metadata, sizeof metadata, SQLITE_TRANSIENT);
    sqlite3_bind_blob(insert, 3, secret, sizeof secret, SQLITE_TRANSIENT);
    if (sqlite3_step(insert) != SQLITE_DONE) fail("seed item");
    sqlite3_finalize(insert);
    sqlite3_close(db);
    // The daemon's readers are connections of their own, opened read-only, with prepared statements.
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, 0) != SQLITE_OK) fail("reopen");
    sqlite3_prepare_v3(db, "BEGIN DEFERRED", -1, SQLITE_PREPARE_PERSISTENT, &begin_read, 0);
    sqlite3_prepare_v3(db, "SELECT generation, count, tag FROM vault_state WHERE id = 1", -1, SQLITE_PREPARE_PERSISTENT, &read_state, 0);
    sqlite3_prepare_v3(db, "SELECT revision, expires_at, metadata, secret FROM items WHERE lookup = ?", -1,
                       SQLITE_PREPARE_PERSISTENT, &read_item, 0);
    sqlite3_prepare_v3(db, "COMMIT", -1, SQLITE_PREPARE_PERSISTENT, &end_read, 0);
}

static int executable_unchanged(connection *c) {
    struct stat info;
    switch (recheck_kind) {
    case RECHECK_NONE:
        return 1;
    case RECHECK_STAT:
        return fstatat(c->proc_dir, "exe", &info, 0) == 0 && info.st_dev == c->exe_device &&
               info.st_ino == c->exe_inode && info.st_nlink > 0;
    case RECHECK_FULL: {
        char target[4096];
        ssize_t length = readlink(c->link_path, target, sizeof target);
        if (length != c->exe_length || memcmp(target, c->exe, (size_t)length) != 0) return 0;
        return stat(c->link_path, &info) == 0 && info.st_dev == c->exe_device && info.st_ino == c->exe_inode;
    }
    }
    return 0;
}

static void spin(void) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < spin_ns);
}

static void reply_error(connection *c, const char *name) {
    char out[256];
    int length = snprintf(out, sizeof out, "{\"error\":\"%s\"}", name);
    (void)!write(c->fd, out, (size_t)length + 1);
}

static int field(const char *request, const char *name, const char **value, size_t *length) {
    const char *start = strstr(request, name);
    if (!start) return 0;
    start += strlen(name);
    const char *end = strchr(start, '"');
    if (!end) return 0;
    *value = start;
    *length = (size_t)(end - start);
    return 1;
}

static void retrieve(connection *c, const char *request) {
    if (spin_ns) spin();
    if (!executable_unchanged(c)) return reply_error(c, "org.sortedvault.vault.PermissionDenied");
    const char *service, *account;
    size_t service_length, account_length;
    if (!field(request, "\"service\":\"", &service, &service_length) ||
        !field(request, "\"account\":\"", &account, &account_length))
        return reply_error(c, "org.varlink.service.InvalidParameter");
    unsigned char lookup[32];
    lookup_key(service, service_length, account, account_length, lookup);

    const unsigned char *metadata = kept_metadata, *secret = kept_secret;
    int metadata_length = kept_metadata_length, secret_length = kept_secret_length;
    int from_database = with_store || !kept;
    if (from_database) {
        if (sqlite3_step(begin_read) != SQLITE_DONE) fail("begin");
        sqlite3_reset(begin_read);
        if (with_state) {
            if (sqlite3_step(read_state) != SQLITE_ROW) fail("state");
            unsigned char state[16] = {0};
            sqlite3_int64 generation = sqlite3_column_int64(read_state, 0), count = sqlite3_column_int64(read_state, 1);
            memcpy(state, &generation, 8);
            memcpy(state + 8, &count, 8);
            if (sqlite3_column_bytes(read_state, 2) != crypto_auth_BYTES ||
                crypto_auth_verify(sqlite3_column_blob(read_state, 2), state, sizeof state, state_key) != 0)
                fail("state tag");
            sqlite3_reset(read_state);
        }
        sqlite3_bind_blob(read_item, 1, lookup, sizeof lookup, SQLITE_STATIC);
        if (sqlite3_step(read_item) != SQLITE_ROW) {
            sqlite3_reset(read_item);
            sqlite3_step(end_read);
            sqlite3_reset(end_read);
            return reply_error(c, "org.sortedvault.vault.ItemNotFound");
        }
        metadata = sqlite3_column_blob(read_item, 2);
        metadata_length = sqlite3_column_bytes(read_item, 2);
        secret = sqlite3_column_blob(read_item, 3);
        secret_length = sqlite3_column_bytes(read_item, 3);
        if (!with_store) {
            memcpy(kept_metadata, metadata, (size_t)metadata_length);
            memcpy(kept_secret, secret, (size_t)secret_length);
            kept_metadata_length = metadata_length;
            kept_secret_length = secret_length;
            kept = 1;
        }
    }
    unsigned char opened_metadata[512], plain[2048];
    size_t plain_length = (size_t)secret_length - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES;
    if (with_crypto) {
        if (crypto_secretbox_open_easy(opened_metadata, metadata + 24, (unsigned long long)metadata_length - 24, metadata, vault_key) ||
            crypto_secretbox_open_easy(plain, secret + 24, (unsigned long long)secret_length - 24, secret, vault_key))
            fail("open");
    } else {
        memset(plain, 0x41, plain_length);
    }
    if (from_database) {
        sqlite3_reset(read_item);
        if (sqlite3_step(end_read) != SQLITE_DONE) fail("commit");
        sqlite3_reset(end_read);
    }
    if (with_log) {
        char line[4608];
        int length = snprintf(line, sizeof line, "%lld uid=%u pid=%d exe=%.*s Retrieve service=%.*s allowed\n",
                              (long long)time(0), c->uid, c->pid, (int)c->exe_length, c->exe, (int)service_length, service);
        if (!log_batched) {
            (void)!write(log_fd, line, (size_t)length);
        } else {
            if (log_pending_length + (size_t)length > sizeof log_pending) flush_log();
            if (log_pending_length == 0) clock_gettime(CLOCK_MONOTONIC, &log_pending_since);
            memcpy(log_pending + log_pending_length, line, (size_t)length);
            log_pending_length += (size_t)length;
        }
    }
    char out[4096];
    int length = snprintf(out, sizeof out, "{\"parameters\":{\"item\":{\"service\":\"%.*s\",\"account\":\"%.*s\"},\"secret\":\"",
                          (int)service_length, service, (int)account_length, account);
    sodium_bin2base64(out + length, sizeof out - (size_t)length, plain, plain_length, sodium_base64_VARIANT_ORIGINAL);
    length += (int)strlen(out + length);
    length += snprintf(out + length, sizeof out - (size_t)length, "\"}}");
    out[length++] = 0;
    (void)!write(c->fd, out, (size_t)length);
    sodium_memzero(plain, sizeof plain);
    sodium_memzero(out, sizeof out);
}

static connection *accept_peer(int listener) {
    int fd = accept4(listener, 0, 0, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return 0;
    struct ucred peer;
    socklen_t size = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
        close(fd);
        return 0;
    }
    connection *c = calloc(1, sizeof *c);
    c->fd = fd;
    c->pid = peer.pid;
    c->uid = peer.uid;
    snprintf(c->link_path, sizeof c->link_path, "/proc/%d/exe", peer.pid);
    c->exe_length = readlink(c->link_path, c->exe, sizeof c->exe);
    struct stat info;
    if (stat(c->link_path, &info) == 0) {
        c->exe_device = info.st_dev;
        c->exe_inode = info.st_ino;
    }
    char path[64], status[4096];
    snprintf(path, sizeof path, "/proc/%d/status", peer.pid);
    int status_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (status_fd >= 0) {
        (void)!read(status_fd, status, sizeof status);
        close(status_fd);
    }
    c->proc_dir = -1;
    if (recheck_kind == RECHECK_STAT) {
        snprintf(path, sizeof path, "/proc/%d", peer.pid);
        c->proc_dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    return c;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: floor SOCKET DATABASE LOG [--recheck full|stat|none] [--no-state] [--no-store] [--no-crypto] [--no-log] [--log-batched] [--spin MICROSECONDS]\n");
        return 2;
    }
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--recheck") && i + 1 < argc) {
            const char *kind = argv[++i];
            recheck_kind = !strcmp(kind, "stat") ? RECHECK_STAT : !strcmp(kind, "none") ? RECHECK_NONE : RECHECK_FULL;
        } else if (!strcmp(argv[i], "--no-state")) with_state = 0;
        else if (!strcmp(argv[i], "--no-store")) with_store = 0;
        else if (!strcmp(argv[i], "--no-crypto")) with_crypto = 0;
        else if (!strcmp(argv[i], "--no-log")) with_log = 0;
        else if (!strcmp(argv[i], "--log-batched")) log_batched = 1;
        else if (!strcmp(argv[i], "--spin") && i + 1 < argc) spin_ns = atol(argv[++i]) * 1000L;
        else {
            fprintf(stderr, "floor: unknown switch %s\n", argv[i]);
            return 2;
        }
    }
    if (sodium_init() < 0) return 1;
    randombytes_buf(vault_key, sizeof vault_key);
    randombytes_buf(state_key, sizeof state_key);
    seed(argv[2]);
    log_fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) fail("log");

    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", argv[1]);
    unlink(argv[1]);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 256) != 0) fail("listen");
    int poller = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = 0};
    epoll_ctl(poller, EPOLL_CTL_ADD, listener, &event);
    struct epoll_event ready[64];
    for (;;) {
        int timeout = -1;
        if (log_pending_length > 0) {
            long waited = milliseconds_since(&log_pending_since);
            if (waited >= 100) flush_log(); else timeout = (int)(100 - waited);
        }
        int count = epoll_wait(poller, ready, 64, timeout);
        for (int i = 0; i < count; i++) {
            connection *c = ready[i].data.ptr;
            if (!c) {
                if ((c = accept_peer(listener))) {
                    struct epoll_event readable = {.events = EPOLLIN, .data.ptr = c};
                    epoll_ctl(poller, EPOLL_CTL_ADD, c->fd, &readable);
                }
                continue;
            }
            ssize_t received = read(c->fd, c->buffer + c->used, sizeof c->buffer - c->used - 1);
            if (received <= 0) {
                close(c->fd);
                if (c->proc_dir >= 0) close(c->proc_dir);
                free(c);
                continue;
            }
            c->used += (size_t)received;
            char *end;
            while ((end = memchr(c->buffer, 0, c->used))) {
                size_t length = (size_t)(end - c->buffer);
                retrieve(c, c->buffer);
                memmove(c->buffer, end + 1, c->used - length - 1);
                c->used -= length + 1;
            }
        }
    }
}
