/* The least a trade can cost SQLite's writer, on one market and spread over many.
 *
 * One thread writes trades in group commits of 32, as Hanson's writer does, on a WAL
 * database with synchronous=NORMAL and a second thread checkpointing; nothing else runs:
 * no HTTP, no market maker, no events, no fsync. Two schemas:
 *   keyed: what the spec's reads need a trade to keep at the least: the market's row (its
 *          quantities), the wallet's position on it, the wallet's balance, and the trade,
 *          found by market (a market's trades and price history) through an index.
 *   log:   the trade row alone, appended; nothing is keyed by market.
 * Trades fall uniformly on MARKETS markets (1 = hot_market, 100 = many_markets) from 200
 * wallets. It prints trades/s and the WAL frames (pages) a commit wrote.
 *
 *   SQ=$(find ~/.cargo/registry/src -maxdepth 2 -name 'libsqlite3-sys-0.35.0')/sqlite3
 *   gcc -O2 -pthread -I$SQ -o /tmp/spread-floor tools/sqlite-spread-floor.c $SQ/sqlite3.c -ldl -lm
 *   /tmp/spread-floor keyed 1 10; /tmp/spread-floor keyed 100 10
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sqlite3.h"

#define BATCH 32
#define WALLETS 200

static const char *path;
static volatile int running = 1;

static void must(int rc, sqlite3 *db, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *checkpoints(void *unused) {
    (void)unused;
    sqlite3 *db;
    must(sqlite3_open(path, &db), db, "open checkpointer");
    while (running) {
        usleep(50000);
        sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    }
    sqlite3_close(db);
    return NULL;
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql) {
    sqlite3_stmt *s;
    must(sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL), db, sql);
    return s;
}

static void run(sqlite3_stmt *s) {
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "step: %s\n", sqlite3_errmsg(sqlite3_db_handle(s)));
        exit(1);
    }
    sqlite3_reset(s);
}

static int frames_written;
static int count_frames(void *unused, sqlite3 *db, const char *name, int frames) {
    (void)unused, (void)db, (void)name;
    frames_written = frames;
    return SQLITE_OK;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "keyed") && strcmp(argv[1], "log"))) {
        fprintf(stderr, "usage: %s keyed|log MARKETS SECONDS\n", argv[0]);
        return 2;
    }
    int keyed = !strcmp(argv[1], "keyed"), markets = atoi(argv[2]);
    double seconds = atof(argv[3]);
    char dbpath[] = "/tmp/spread-floor-XXXXXX";
    int fd = mkstemp(dbpath);
    close(fd);
    unlink(dbpath);
    path = dbpath;

    sqlite3 *db;
    must(sqlite3_open(path, &db), db, "open");
    must(sqlite3_exec(db,
             "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0;"
             "CREATE TABLE markets (id INTEGER PRIMARY KEY, q0 TEXT, q1 TEXT, volume TEXT, revision INTEGER);"
             "CREATE TABLE positions (wallet INTEGER, market INTEGER, outcome INTEGER, shares TEXT,"
             "  invested TEXT, PRIMARY KEY (wallet, market, outcome)) WITHOUT ROWID;"
             "CREATE TABLE balances (wallet INTEGER PRIMARY KEY, amount TEXT);"
             "CREATE TABLE trades (seq INTEGER PRIMARY KEY, id TEXT, market INTEGER, outcome INTEGER,"
             "  wallet INTEGER, amount TEXT, shares TEXT, price TEXT, at INTEGER);",
             NULL, NULL, NULL),
         db, "schema");
    if (keyed)
        must(sqlite3_exec(db, "CREATE INDEX trades_market ON trades (market, at, seq);", NULL, NULL, NULL), db, "index");
    /* Every market, position and balance exists, as after the bench's warm-up. */
    must(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), db, "begin");
    sqlite3_stmt *seed_market = prep(db, "INSERT INTO markets VALUES (?1, '1000000000000000000000', '1000000000000000000000', '0', 0)");
    sqlite3_stmt *seed_position = prep(db, "INSERT INTO positions VALUES (?1, ?2, ?3, '0', '0')");
    sqlite3_stmt *seed_balance = prep(db, "INSERT INTO balances VALUES (?1, '1000000000000000000000000')");
    for (int m = 0; m < markets; m++) {
        sqlite3_bind_int(seed_market, 1, m);
        run(seed_market);
        for (int w = 0; w < WALLETS; w++)
            for (int o = 0; o < 2; o++) {
                sqlite3_bind_int(seed_position, 1, w);
                sqlite3_bind_int(seed_position, 2, m);
                sqlite3_bind_int(seed_position, 3, o);
                run(seed_position);
            }
    }
    for (int w = 0; w < WALLETS; w++) {
        sqlite3_bind_int(seed_balance, 1, w);
        run(seed_balance);
    }
    must(sqlite3_exec(db, "COMMIT; PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), db, "seed");
    sqlite3_wal_hook(db, count_frames, NULL);

    sqlite3_stmt *market = prep(db, "UPDATE markets SET q0 = ?2, volume = ?3, revision = revision + 1 WHERE id = ?1");
    sqlite3_stmt *position = prep(db, "UPDATE positions SET shares = ?4, invested = ?5 WHERE wallet = ?1 AND market = ?2 AND outcome = ?3");
    sqlite3_stmt *balance = prep(db, "UPDATE balances SET amount = ?2 WHERE wallet = ?1");
    sqlite3_stmt *trade = prep(db, "INSERT INTO trades (id, market, outcome, wallet, amount, shares, price, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    sqlite3_stmt *begin = prep(db, "BEGIN IMMEDIATE"), *commit = prep(db, "COMMIT");

    pthread_t checkpointer;
    pthread_create(&checkpointer, NULL, checkpoints, NULL);
    unsigned long long trades = 0, frames = 0, commits = 0, rng = 88172645463325252ull;
    char id[40], amount[40];
    double start = now();
    while (now() - start < seconds) {
        run(begin);
        for (int i = 0; i < BATCH; i++, trades++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            int m = (int)(rng % markets), w = (int)((rng >> 16) % WALLETS), o = (int)((rng >> 32) & 1);
            snprintf(id, sizeof id, "%016llx-%08llx", rng, trades);
            snprintf(amount, sizeof amount, "%llu000000000000000", 1000 + trades);
            long long at = (long long)((now() - start) * 1e6);
            if (keyed) {
                sqlite3_bind_int(market, 1, m);
                sqlite3_bind_text(market, 2, amount, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(market, 3, amount, -1, SQLITE_TRANSIENT);
                run(market);
                sqlite3_bind_int(position, 1, w);
                sqlite3_bind_int(position, 2, m);
                sqlite3_bind_int(position, 3, o);
                sqlite3_bind_text(position, 4, amount, -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(position, 5, amount, -1, SQLITE_TRANSIENT);
                run(position);
                sqlite3_bind_int(balance, 1, w);
                sqlite3_bind_text(balance, 2, amount, -1, SQLITE_TRANSIENT);
                run(balance);
            }
            sqlite3_bind_text(trade, 1, id, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int(trade, 2, m);
            sqlite3_bind_int(trade, 3, o);
            sqlite3_bind_int(trade, 4, w);
            for (int k = 5; k <= 7; k++) sqlite3_bind_text(trade, k, amount, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(trade, 8, at);
            run(trade);
        }
        int before = frames_written;
        run(commit);
        /* The hook reports the WAL's frames after the commit; a checkpoint may restart it. */
        frames += frames_written > before ? frames_written - before : frames_written;
        commits++;
    }
    double elapsed = now() - start;
    running = 0;
    pthread_join(checkpointer, NULL);
    printf("{\"schema\":\"%s\",\"markets\":%d,\"trades_per_s\":%.0f,\"pages_per_commit\":%.1f}\n", argv[1], markets,
           trades / elapsed, (double)frames / commits);
    sqlite3_close(db);
    char wal[64], shm[64];
    snprintf(wal, sizeof wal, "%s-wal", dbpath);
    snprintf(shm, sizeof shm, "%s-shm", dbpath);
    unlink(dbpath), unlink(wal), unlink(shm);
    return 0;
}
