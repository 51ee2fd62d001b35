/*
 * powercut: an LD_PRELOAD shim that records every change a process makes to the files of one
 * directory, for a power-cut model to replay (crates/hanson/tests/power_loss/).
 *
 * Each call that changes a regular file of POWERCUT_DIR (an entry directly in it; names
 * ending in "-shm" are left out: that file is shared memory, not data) is passed through,
 * then appended to POWERCUT_LOG with its data: open (name, inode, flags), write (offset and
 * bytes, for pwrite/pwritev/write/writev), ftruncate, fallocate, fsync/fdatasync (also of
 * the directory itself), unlink and rename. A sync's record is appended when it returns and
 * carries how many records the log held when it was called: what it makes durable is what
 * was written before that. A change and its record are made under one lock, so the log's
 * order is the order in which the calls took effect; a sync runs outside it.
 *
 * Record: u32 length of the whole record, u8 op, 3 bytes zero, u64 inode, then per op
 * (little-endian, packed) as `struct` comments below say. Anything the model cannot follow
 * (a shared writable mapping of a recorded file, a path-based truncate, a duplicated
 * descriptor's write) is recorded as UNSUPPORTED, and the replay refuses the log.
 *
 * What `hanson serve` calls on its database's directory (strace -f of the debug binary):
 * open64/openat (SQLite's unix VFS and Rust's std), pwrite64 (SQLite, through its syscall
 * table, which points at libc's, so interposition reaches it), ftruncate (SQLite's size hint
 * before a checkpoint, and the -shm), fsync (SQLite, built without HAVE_FDATASYNC, and the
 * directory) and fdatasync (the flusher), close, unlink at the last close. The rest are
 * covered in case a build or a later change uses them.
 *
 * POWERCUT_FAULT=skip-flusher-sync: fsync/fdatasync called from the thread named
 * "sqlite-flusher" return 0 without syncing or being recorded. For showing that the checker
 * catches a real loss; never set otherwise.
 *
 * Build: gcc -shared -fPIC -O2 -o powercut.so shim.c -ldl -lpthread
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
    OP_OPEN = 1,      /* u32 flags, u16 name length, name */
    OP_WRITE = 2,     /* i64 offset, then the bytes (to the record's end) */
    OP_TRUNCATE = 3,  /* i64 size */
    OP_SYNC = 4,      /* u64 records in the log when the sync was called, u8 1 if a directory */
    OP_UNLINK = 5,    /* u16 name length, name */
    OP_RENAME = 6,    /* u16 from length, from, u16 to length, to */
    OP_EXTEND = 7,    /* i64 size: fallocate without KEEP_SIZE, the file grows to at least it */
    OP_UNSUPPORTED = 8, /* u16 length, what */
};

#define MAX_FD 65536
enum { UNTRACKED = 0, TRACKED_FILE = 1, TRACKED_DIR = 2 };

static struct {
    unsigned char kind;
    unsigned char append;
    uint64_t ino;
} fds[MAX_FD];

static char dir[PATH_MAX];
static size_t dir_len;
static int log_fd = -1;
static uint64_t records;
static int fault_skip_flusher_sync;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int ready;

#define REAL(name, ret, ...) \
    static ret (*real_##name)(__VA_ARGS__); \
    static ret (*get_##name(void))(__VA_ARGS__) { \
        if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name); \
        return real_##name; \
    }

REAL(open, int, const char *, int, ...)
REAL(open64, int, const char *, int, ...)
REAL(openat, int, int, const char *, int, ...)
REAL(openat64, int, int, const char *, int, ...)
REAL(__open_2, int, const char *, int)
REAL(__open64_2, int, const char *, int)
REAL(creat, int, const char *, mode_t)
REAL(creat64, int, const char *, mode_t)
REAL(close, int, int)
REAL(write, ssize_t, int, const void *, size_t)
REAL(writev, ssize_t, int, const struct iovec *, int)
REAL(pwrite, ssize_t, int, const void *, size_t, off_t)
REAL(pwrite64, ssize_t, int, const void *, size_t, off64_t)
REAL(pwritev, ssize_t, int, const struct iovec *, int, off_t)
REAL(pwritev64, ssize_t, int, const struct iovec *, int, off64_t)
REAL(pwritev2, ssize_t, int, const struct iovec *, int, off_t, int)
REAL(ftruncate, int, int, off_t)
REAL(ftruncate64, int, int, off64_t)
REAL(truncate, int, const char *, off_t)
REAL(truncate64, int, const char *, off64_t)
REAL(fsync, int, int)
REAL(fdatasync, int, int)
REAL(fallocate, int, int, int, off_t, off_t)
REAL(fallocate64, int, int, int, off64_t, off64_t)
REAL(posix_fallocate, int, int, off_t, off_t)
REAL(posix_fallocate64, int, int, off64_t, off64_t)
REAL(unlink, int, const char *)
REAL(unlinkat, int, int, const char *, int)
REAL(rename, int, const char *, const char *)
REAL(renameat, int, int, const char *, int, const char *)
REAL(renameat2, int, int, const char *, int, const char *, unsigned int)
REAL(mmap, void *, void *, size_t, int, int, int, off_t)
REAL(mmap64, void *, void *, size_t, int, int, int, off64_t)
REAL(dup, int, int)
REAL(dup2, int, int, int)
REAL(dup3, int, int, int, int)

__attribute__((constructor)) static void powercut_init(void) {
    const char *d = getenv("POWERCUT_DIR");
    const char *l = getenv("POWERCUT_LOG");
    if (!d || !l || !*d || !*l) return;
    /* The directory as the process will name it: absolute, without a trailing slash. */
    if (!realpath(d, dir)) {
        fprintf(stderr, "powercut: cannot resolve POWERCUT_DIR %s: %s\n", d, strerror(errno));
        abort();
    }
    dir_len = strlen(dir);
    log_fd = get_open()(l, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        fprintf(stderr, "powercut: cannot open POWERCUT_LOG %s: %s\n", l, strerror(errno));
        abort();
    }
    const char *fault = getenv("POWERCUT_FAULT");
    fault_skip_flusher_sync = fault && strcmp(fault, "skip-flusher-sync") == 0;
    ready = 1;
}

/* The name inside the watched directory that `path` (relative to `at`) names: 0 if none,
 * 1 and the name in `name` for an entry, 2 for the directory itself. */
static int classify(int at, const char *path, char *name) {
    char full[PATH_MAX * 2];
    if (!ready || !path) return 0;
    if (path[0] == '/') {
        snprintf(full, sizeof full, "%s", path);
    } else {
        char base[PATH_MAX];
        if (at == AT_FDCWD || at < 0) {
            if (!getcwd(base, sizeof base)) return 0;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", at);
            ssize_t n = readlink(link, base, sizeof base - 1);
            if (n < 0) return 0;
            base[n] = 0;
        }
        snprintf(full, sizeof full, "%s/%s", base, path);
    }
    /* Collapse "//" and trailing "/" and "/." (enough for the paths SQLite and std make). */
    size_t n = strlen(full);
    char clean[PATH_MAX * 2];
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        if (full[i] == '/' && c > 0 && clean[c - 1] == '/') continue;
        clean[c++] = full[i];
    }
    clean[c] = 0;
    while (c > 1 && clean[c - 1] == '/') clean[--c] = 0;
    while (c > 2 && clean[c - 1] == '.' && clean[c - 2] == '/') {
        c -= 2;
        clean[c] = 0;
    }
    if (strncmp(clean, dir, dir_len) != 0) return 0;
    if (clean[dir_len] == 0) return 2;
    if (clean[dir_len] != '/') return 0;
    const char *rest = clean + dir_len + 1;
    if (!*rest || strchr(rest, '/')) return 0;
    size_t len = strlen(rest);
    if (len >= 4 && strcmp(rest + len - 4, "-shm") == 0) return 0;
    if (len >= PATH_MAX) return 0;
    memcpy(name, rest, len + 1);
    return 1;
}

static int tracked(int fd) {
    return ready && fd >= 0 && fd < MAX_FD && fds[fd].kind != UNTRACKED;
}

/* Appends one record; called with `mu` held. */
static void append(unsigned char op, uint64_t ino, const void *a, size_t alen, const struct iovec *data, int ndata, size_t dlen) {
    unsigned char head[16];
    uint32_t total = (uint32_t)(16 + alen + dlen);
    memcpy(head, &total, 4);
    head[4] = op;
    head[5] = head[6] = head[7] = 0;
    memcpy(head + 8, &ino, 8);
    struct iovec iov[64];
    int n = 0;
    iov[n].iov_base = head;
    iov[n++].iov_len = 16;
    if (alen) {
        iov[n].iov_base = (void *)a;
        iov[n++].iov_len = alen;
    }
    size_t left = dlen;
    for (int i = 0; i < ndata && left > 0 && n < 64; i++) {
        size_t take = data[i].iov_len < left ? data[i].iov_len : left;
        if (!take) continue;
        iov[n].iov_base = data[i].iov_base;
        iov[n++].iov_len = take;
        left -= take;
    }
    if (left) {
        fprintf(stderr, "powercut: a write of more than 62 pieces\n");
        abort();
    }
    /* Regular-file writes are whole unless the disk is full; then the log is useless. */
    ssize_t w = get_writev()(log_fd, iov, n);
    if (w != (ssize_t)total) {
        fprintf(stderr, "powercut: cannot append to the log (%zd of %u): %s\n", w, total, strerror(errno));
        abort();
    }
    records++;
}

static void append_name_op(unsigned char op, uint64_t ino, uint32_t *flags, const char *name, const char *name2) {
    unsigned char buf[4 + 2 + PATH_MAX + 2 + PATH_MAX];
    size_t at = 0;
    if (flags) {
        memcpy(buf, flags, 4);
        at += 4;
    }
    uint16_t len = (uint16_t)strlen(name);
    memcpy(buf + at, &len, 2);
    memcpy(buf + at + 2, name, len);
    at += 2 + len;
    if (name2) {
        len = (uint16_t)strlen(name2);
        memcpy(buf + at, &len, 2);
        memcpy(buf + at + 2, name2, len);
        at += 2 + len;
    }
    append(op, ino, buf, at, NULL, 0, 0);
}

static void unsupported(const char *what) {
    uint16_t len = (uint16_t)strlen(what);
    unsigned char buf[2 + 256];
    if (len > 256) len = 256;
    memcpy(buf, &len, 2);
    memcpy(buf + 2, what, len);
    append(OP_UNSUPPORTED, 0, buf, 2 + len, NULL, 0, 0);
}

/* After a successful open of `fd`: tracks it and records the open. Called with `mu` held. */
static void opened(int fd, int kind, const char *name, int flags) {
    if (fd < 0 || fd >= MAX_FD || kind == 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    if (kind == 2 || S_ISDIR(st.st_mode)) {
        fds[fd].kind = kind == 2 ? TRACKED_DIR : UNTRACKED;
        fds[fd].ino = st.st_ino;
        return;
    }
    if (!S_ISREG(st.st_mode)) return;
    fds[fd].kind = TRACKED_FILE;
    fds[fd].append = (flags & O_APPEND) != 0;
    fds[fd].ino = st.st_ino;
    uint32_t f = (uint32_t)flags;
    append_name_op(OP_OPEN, st.st_ino, &f, name, NULL);
}

static mode_t mode_of(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_BODY(at, call)                              \
    char name[PATH_MAX];                                 \
    int kind = classify(at, path, name);                 \
    if (!kind) return call;                              \
    pthread_mutex_lock(&mu);                             \
    int fd = call;                                       \
    if (fd >= 0) opened(fd, kind, name, flags);          \
    pthread_mutex_unlock(&mu);                           \
    return fd;

int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    OPEN_BODY(AT_FDCWD, get_open()(path, flags, mode))
}
int open64(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    OPEN_BODY(AT_FDCWD, get_open64()(path, flags, mode))
}
int openat(int at, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    OPEN_BODY(at, get_openat()(at, path, flags, mode))
}
int openat64(int at, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    OPEN_BODY(at, get_openat64()(at, path, flags, mode))
}
int __open_2(const char *path, int flags) { OPEN_BODY(AT_FDCWD, get___open_2()(path, flags)) }
int __open64_2(const char *path, int flags) { OPEN_BODY(AT_FDCWD, get___open64_2()(path, flags)) }
int creat(const char *path, mode_t mode) {
    int flags = O_CREAT | O_WRONLY | O_TRUNC;
    OPEN_BODY(AT_FDCWD, get_creat()(path, mode))
}
int creat64(const char *path, mode_t mode) {
    int flags = O_CREAT | O_WRONLY | O_TRUNC;
    OPEN_BODY(AT_FDCWD, get_creat64()(path, mode))
}

int close(int fd) {
    if (!tracked(fd)) return get_close()(fd);
    pthread_mutex_lock(&mu);
    fds[fd].kind = UNTRACKED;
    int rc = get_close()(fd);
    pthread_mutex_unlock(&mu);
    return rc;
}

static int dup_result(int fd, int newfd) {
    if (tracked(fd) && newfd >= 0) {
        pthread_mutex_lock(&mu);
        unsupported("dup of a recorded file");
        pthread_mutex_unlock(&mu);
    }
    return newfd;
}
int dup(int fd) { return dup_result(fd, get_dup()(fd)); }
int dup2(int fd, int to) {
    if (tracked(to)) {
        pthread_mutex_lock(&mu);
        fds[to].kind = UNTRACKED;
        pthread_mutex_unlock(&mu);
    }
    return dup_result(fd, get_dup2()(fd, to));
}
int dup3(int fd, int to, int flags) {
    if (tracked(to)) {
        pthread_mutex_lock(&mu);
        fds[to].kind = UNTRACKED;
        pthread_mutex_unlock(&mu);
    }
    return dup_result(fd, get_dup3()(fd, to, flags));
}

static void wrote(int fd, off64_t offset, const struct iovec *iov, int n, ssize_t done) {
    if (done <= 0) return;
    append(OP_WRITE, fds[fd].ino, &offset, 8, iov, n, (size_t)done);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    if (!tracked(fd)) return get_pwrite()(fd, buf, count, offset);
    pthread_mutex_lock(&mu);
    ssize_t done = get_pwrite()(fd, buf, count, offset);
    int saved = errno;
    struct iovec iov = {(void *)buf, count};
    wrote(fd, offset, &iov, 1, done);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return done;
}
ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset) {
    if (!tracked(fd)) return get_pwrite64()(fd, buf, count, offset);
    pthread_mutex_lock(&mu);
    ssize_t done = get_pwrite64()(fd, buf, count, offset);
    int saved = errno;
    struct iovec iov = {(void *)buf, count};
    wrote(fd, offset, &iov, 1, done);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return done;
}
ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t offset) {
    if (!tracked(fd)) return get_pwritev()(fd, iov, n, offset);
    pthread_mutex_lock(&mu);
    ssize_t done = get_pwritev()(fd, iov, n, offset);
    int saved = errno;
    wrote(fd, offset, iov, n, done);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return done;
}
ssize_t pwritev64(int fd, const struct iovec *iov, int n, off64_t offset) {
    if (!tracked(fd)) return get_pwritev64()(fd, iov, n, offset);
    pthread_mutex_lock(&mu);
    ssize_t done = get_pwritev64()(fd, iov, n, offset);
    int saved = errno;
    wrote(fd, offset, iov, n, done);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return done;
}
ssize_t pwritev2(int fd, const struct iovec *iov, int n, off_t offset, int flags) {
    if (!tracked(fd)) return get_pwritev2()(fd, iov, n, offset, flags);
    pthread_mutex_lock(&mu);
    off64_t at = offset;
    if (offset == -1) at = fds[fd].append ? lseek64(fd, 0, SEEK_END) : lseek64(fd, 0, SEEK_CUR);
    ssize_t done = get_pwritev2()(fd, iov, n, offset, flags);
    int saved = errno;
    if (flags & (RWF_DSYNC | RWF_SYNC)) unsupported("pwritev2 with RWF_DSYNC/RWF_SYNC");
    wrote(fd, at, iov, n, done);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return done;
}
ssize_t write(int fd, const void *buf, size_t count) {
    if (!tracked(fd)) return get_write()(fd, buf, count);
    pthread_mutex_lock(&mu);
    off64_t at = fds[fd].append ? lseek64(fd, 0, SEEK_END) : lseek64(fd, 0, SEEK_CUR);
    ssize_t done = get_write()(fd, buf, count);
    int saved = errno;
    struct iovec iov = {(void *)buf, count};
    wrote(fd, at, &iov, 1, done);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return done;
}
ssize_t writev(int fd, const struct iovec *iov, int n) {
    if (!tracked(fd)) return get_writev()(fd, iov, n);
    pthread_mutex_lock(&mu);
    off64_t at = fds[fd].append ? lseek64(fd, 0, SEEK_END) : lseek64(fd, 0, SEEK_CUR);
    ssize_t done = get_writev()(fd, iov, n);
    int saved = errno;
    wrote(fd, at, iov, n, done);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return done;
}

static int truncated(int fd, int rc, off64_t size) {
    if (rc == 0) append(OP_TRUNCATE, fds[fd].ino, &size, 8, NULL, 0, 0);
    return rc;
}
int ftruncate(int fd, off_t size) {
    if (!tracked(fd)) return get_ftruncate()(fd, size);
    pthread_mutex_lock(&mu);
    int rc = get_ftruncate()(fd, size);
    int saved = errno;
    truncated(fd, rc, size);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}
int ftruncate64(int fd, off64_t size) {
    if (!tracked(fd)) return get_ftruncate64()(fd, size);
    pthread_mutex_lock(&mu);
    int rc = get_ftruncate64()(fd, size);
    int saved = errno;
    truncated(fd, rc, size);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}
int truncate(const char *path, off_t size) {
    char name[PATH_MAX];
    if (classify(AT_FDCWD, path, name) == 1) {
        pthread_mutex_lock(&mu);
        unsupported("truncate by path");
        pthread_mutex_unlock(&mu);
    }
    return get_truncate()(path, size);
}
int truncate64(const char *path, off64_t size) {
    char name[PATH_MAX];
    if (classify(AT_FDCWD, path, name) == 1) {
        pthread_mutex_lock(&mu);
        unsupported("truncate by path");
        pthread_mutex_unlock(&mu);
    }
    return get_truncate64()(path, size);
}

static int extended(int fd, int rc, int mode, off64_t offset, off64_t len) {
    if (rc == 0) {
        if (mode & ~FALLOC_FL_KEEP_SIZE) {
            unsupported("fallocate with a mode other than KEEP_SIZE");
        } else if (!(mode & FALLOC_FL_KEEP_SIZE)) {
            off64_t size = offset + len;
            append(OP_EXTEND, fds[fd].ino, &size, 8, NULL, 0, 0);
        }
    }
    return rc;
}
int fallocate(int fd, int mode, off_t offset, off_t len) {
    if (!tracked(fd)) return get_fallocate()(fd, mode, offset, len);
    pthread_mutex_lock(&mu);
    int rc = get_fallocate()(fd, mode, offset, len);
    int saved = errno;
    extended(fd, rc, mode, offset, len);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}
int fallocate64(int fd, int mode, off64_t offset, off64_t len) {
    if (!tracked(fd)) return get_fallocate64()(fd, mode, offset, len);
    pthread_mutex_lock(&mu);
    int rc = get_fallocate64()(fd, mode, offset, len);
    int saved = errno;
    extended(fd, rc, mode, offset, len);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}
int posix_fallocate(int fd, off_t offset, off_t len) {
    if (!tracked(fd)) return get_posix_fallocate()(fd, offset, len);
    pthread_mutex_lock(&mu);
    int rc = get_posix_fallocate()(fd, offset, len);
    extended(fd, rc, 0, offset, len);
    pthread_mutex_unlock(&mu);
    return rc;
}
int posix_fallocate64(int fd, off64_t offset, off64_t len) {
    if (!tracked(fd)) return get_posix_fallocate64()(fd, offset, len);
    pthread_mutex_lock(&mu);
    int rc = get_posix_fallocate64()(fd, offset, len);
    extended(fd, rc, 0, offset, len);
    pthread_mutex_unlock(&mu);
    return rc;
}

static int skip_this_sync(void) {
    if (!fault_skip_flusher_sync) return 0;
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    return strcmp(name, "sqlite-flusher") == 0;
}

/* A sync makes durable what was written before it was called: the record says how many
 * records the log held then, and is appended once the sync has returned. */
static int synced(int fd, int (*real)(int)) {
    if (!tracked(fd)) return real(fd);
    if (skip_this_sync()) return 0;
    pthread_mutex_lock(&mu);
    uint64_t before = records;
    uint64_t ino = fds[fd].ino;
    unsigned char is_dir = fds[fd].kind == TRACKED_DIR;
    pthread_mutex_unlock(&mu);
    int rc = real(fd);
    int saved = errno;
    if (rc == 0) {
        unsigned char buf[9];
        memcpy(buf, &before, 8);
        buf[8] = is_dir;
        pthread_mutex_lock(&mu);
        append(OP_SYNC, ino, buf, 9, NULL, 0, 0);
        pthread_mutex_unlock(&mu);
    }
    errno = saved;
    return rc;
}
int fsync(int fd) { return synced(fd, get_fsync()); }
int fdatasync(int fd) { return synced(fd, get_fdatasync()); }

int unlink(const char *path) {
    char name[PATH_MAX];
    if (classify(AT_FDCWD, path, name) != 1) return get_unlink()(path);
    pthread_mutex_lock(&mu);
    int rc = get_unlink()(path);
    int saved = errno;
    if (rc == 0) append_name_op(OP_UNLINK, 0, NULL, name, NULL);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}
int unlinkat(int at, const char *path, int flags) {
    char name[PATH_MAX];
    if ((flags & AT_REMOVEDIR) || classify(at, path, name) != 1) return get_unlinkat()(at, path, flags);
    pthread_mutex_lock(&mu);
    int rc = get_unlinkat()(at, path, flags);
    int saved = errno;
    if (rc == 0) append_name_op(OP_UNLINK, 0, NULL, name, NULL);
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}

static int renamed(int at1, const char *from, int at2, const char *to, int (*call)(void *), void *arg) {
    char a[PATH_MAX], b[PATH_MAX];
    int ka = classify(at1, from, a), kb = classify(at2, to, b);
    if (ka != 1 && kb != 1) return call(arg);
    pthread_mutex_lock(&mu);
    int rc = call(arg);
    int saved = errno;
    if (rc == 0) {
        if (ka == 1 && kb == 1) append_name_op(OP_RENAME, 0, NULL, a, b);
        else unsupported("rename into or out of the recorded directory");
    }
    pthread_mutex_unlock(&mu);
    errno = saved;
    return rc;
}
struct rename_args { int at1; const char *from; int at2; const char *to; unsigned int flags; int which; };
static int do_rename(void *p) {
    struct rename_args *r = p;
    if (r->which == 0) return get_rename()(r->from, r->to);
    if (r->which == 1) return get_renameat()(r->at1, r->from, r->at2, r->to);
    return get_renameat2()(r->at1, r->from, r->at2, r->to, r->flags);
}
int rename(const char *from, const char *to) {
    struct rename_args r = {AT_FDCWD, from, AT_FDCWD, to, 0, 0};
    return renamed(AT_FDCWD, from, AT_FDCWD, to, do_rename, &r);
}
int renameat(int at1, const char *from, int at2, const char *to) {
    struct rename_args r = {at1, from, at2, to, 0, 1};
    return renamed(at1, from, at2, to, do_rename, &r);
}
int renameat2(int at1, const char *from, int at2, const char *to, unsigned int flags) {
    struct rename_args r = {at1, from, at2, to, flags, 2};
    return renamed(at1, from, at2, to, do_rename, &r);
}

static void *mapped(int fd, int prot, int flags, void *addr) {
    if (addr != MAP_FAILED && tracked(fd) && (prot & PROT_WRITE) && (flags & MAP_SHARED)) {
        pthread_mutex_lock(&mu);
        unsupported("a shared writable mapping of a recorded file");
        pthread_mutex_unlock(&mu);
    }
    return addr;
}
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset) {
    return mapped(fd, prot, flags, get_mmap()(addr, len, prot, flags, fd, offset));
}
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t offset) {
    return mapped(fd, prot, flags, get_mmap64()(addr, len, prot, flags, fd, offset));
}
