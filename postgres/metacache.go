package postgres

import (
	"context"
	"sync"
)

// metaCache keeps the search layer's settings (search_meta) between
// searches, so a search need not read the embedder's setting in a round
// trip of its own: the postings' first round trip reads the whole table
// (a few rows) with the snapshot's totals, and a search checks after the
// fact that the value it used is the one a read since found
// (SearchMetaCurrent). Every read of the table is a stamp.
type metaCache struct {
	mu     sync.Mutex
	values map[string]string // nil until read, and after this store changed a value
	stamp  uint64            // reads of the whole table so far
}

// saw records the table as a read found it.
func (c *metaCache) saw(keys, values []string) {
	m := make(map[string]string, len(keys))
	for i, k := range keys {
		m[k] = values[i]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values = m
	c.stamp++
}

// forget drops the values after this store changed one.
func (c *metaCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values = nil
	c.stamp++
}

// get returns key's value as last read and the stamp of that read; ok
// false when there is none.
func (c *metaCache) get(key string) (v string, stamp uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.values == nil {
		return "", 0, false
	}
	return c.values[key], c.stamp, true
}

// current reports whether a read after stamp found key's value v; known
// false when no read came since, or this store changed a value.
func (c *metaCache) current(key, v string, stamp uint64) (same, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stamp <= stamp || c.values == nil {
		return false, false
	}
	return c.values[key] == v, true
}

// metaColumns reads the whole of search_meta as two columns, keys and
// values, for metaCache.saw: a statement the search already sends carries
// them (fromPostings).
const metaColumns = `ARRAY(SELECT key FROM search_meta ORDER BY key), ARRAY(SELECT value FROM search_meta ORDER BY key)`

// CachedSearchMeta returns key's value as this store last read it, with
// no round trip, and the stamp of that read for SearchMetaCurrent; ok
// false when it has none to give (read with SearchMeta).
func (db *DB) CachedSearchMeta(key string) (v string, stamp uint64, ok bool) {
	return db.meta.get(key)
}

// SearchMetaCurrent reports whether key's value was still v after a
// CachedSearchMeta of the given stamp: a search's own statements read the
// table when it goes through the postings, else it is read here (the
// round trip the cache saved).
func (db *DB) SearchMetaCurrent(ctx context.Context, key, v string, stamp uint64) (bool, error) {
	if same, known := db.meta.current(key, v, stamp); known {
		return same, nil
	}
	if err := db.readMeta(ctx); err != nil {
		return false, err
	}
	same, _ := db.meta.current(key, v, stamp)
	return same, nil
}

// readMeta reads the whole of search_meta into the cache.
func (db *DB) readMeta(ctx context.Context) error {
	var keys, values []string
	if err := db.pool.QueryRow(ctx, `SELECT `+metaColumns).Scan(&keys, &values); err != nil {
		return db.fail(err)
	}
	db.meta.saw(keys, values)
	return nil
}
