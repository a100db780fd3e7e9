package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clawledger/clawledger/internal/pgtest"
)

// The end-to-end tests of the reports, ingest, export and episodes run on
// every ledger backend: SQLite, and PostgreSQL when CLAWLEDGER_TEST_POSTGRES
// names a server (scripts/test-services.sh starts a throwaway one), each
// test on a schema of its own. Without a server the PostgreSQL runs skip,
// saying how to run them. A PostgreSQL run's --json answers are held to
// the same golden files as SQLite's, where a ledger of many hosts may add
// host fields and the ledger's location and schema version are its own.

// backend is the ledger backend an end-to-end test runs on.
type backend struct {
	server string // the PostgreSQL server; "" for SQLite
}

// onBackends runs test on SQLite, then on PostgreSQL.
func onBackends(t *testing.T, test func(t *testing.T, b backend)) {
	t.Run("sqlite", func(t *testing.T) { test(t, backend{}) })
	t.Run("postgres", func(t *testing.T) { test(t, backend{server: pgtest.Server(t)}) })
}

// postgres reports whether the test runs on PostgreSQL.
func (b backend) postgres() bool { return b.server != "" }

// ledger returns a new ledger's location: a file in dir, or a schema of
// its own on the server (dropped when the test ends).
func (b backend) ledger(t *testing.T, dir string) string {
	if !b.postgres() {
		return filepath.Join(dir, "ledger.db")
	}
	return pgtest.DSN(t)
}

// cli is newCLI on the backend: the default ledger file, or a schema of
// its own named by CLAWLEDGER_DB.
func (b backend) cli(t *testing.T, home string) *cli {
	c := newCLI(t, home)
	if b.postgres() {
		c.ledger = b.ledger(t, "")
		c.env = append(c.env, "CLAWLEDGER_DB="+c.ledger)
	}
	return c
}

// newLedger is newLedger (a CLI in this process on a fresh ledger) on the
// backend.
func (b backend) newLedger(t *testing.T, home string, states ...string) *readingCLI {
	c := newLedger(t, home, states...)
	c.db = b.ledger(t, filepath.Dir(c.db))
	return c
}

// edgeLedger is edgeLedger on the backend: on PostgreSQL a fresh ledger
// holding the edge-case fixture.
func (b backend) edgeLedger(t *testing.T) *readingCLI {
	c := edgeLedger(t)
	if b.postgres() {
		pg := *c
		pg.t, pg.db = t, b.ledger(t, "")
		pg.ok("ingest", "--json")
		return &pg
	}
	return c
}

// isPostgres reports whether a ledger location is PostgreSQL's.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// sameAnswer compares a PostgreSQL ledger's --json answer with SQLite's
// (or its golden file): equal, but for the ledger's location, schema
// version and search query (explain's fts), and the host fields (host,
// hosts) a ledger of many hosts adds.
func sameAnswer(want, got []byte) error {
	var w, g any
	for _, x := range []struct {
		b []byte
		v *any
	}{{want, &w}, {got, &g}} {
		d := json.NewDecoder(bytes.NewReader(x.b))
		d.UseNumber()
		if err := d.Decode(x.v); err != nil {
			return fmt.Errorf("not JSON: %v", err)
		}
	}
	return sameValue("", w, g)
}

func sameValue(path string, want, got any) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v, want an object", path, got)
		}
		for k := range g {
			if _, ok := w[k]; !ok && k != "host" && k != "hosts" {
				return fmt.Errorf("%s: a field %q SQLite does not give", path, k)
			}
		}
		for k, wv := range w {
			if k == "db" || k == "schema_version" || k == "fts" {
				continue // the ledger's own: its location, its schema's numbering, its query language
			}
			if err := sameValue(path+"."+k, wv, g[k]); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: %d items, want %d", path, len(g), len(w))
		}
		for i := range w {
			if err := sameValue(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Errorf("%s: %v, want %v", path, got, want)
	}
	return nil
}

// TestSameAnswer: a PostgreSQL answer equals SQLite's but for what is the
// ledger's own and the host fields; anything else that differs is named.
func TestSameAnswer(t *testing.T) {
	const want = `{"db": "/l.db", "schema_version": 12, "rows": [{"n": 1, "s": "a"}], "explain": {"fts": "\"a\""}}`
	for _, c := range []struct {
		got, err string
	}{
		{`{"db": "postgres://h/db", "schema_version": 3, "rows": [{"n": 1, "s": "a", "host": "h"}], "hosts": [], "explain": {"fts": "'a'"}}`, ""},
		{`{"db": "/l.db", "schema_version": 12, "rows": [{"n": 1.0, "s": "a"}], "explain": {"fts": ""}}`, ".rows[0].n: 1.0, want 1"},
		{`{"db": "/l.db", "schema_version": 12, "rows": [{"n": 1, "s": "a", "extra": 1}], "explain": {}}`, `.rows[0]: a field "extra" SQLite does not give`},
		{`{"db": "/l.db", "schema_version": 12, "rows": [], "explain": {}}`, ".rows: 0 items, want 1"},
		{`{"db": "/l.db", "schema_version": 12, "explain": {}}`, ".rows: 0 items, want 1"},
	} {
		err := sameAnswer([]byte(want), []byte(c.got))
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.got, err, c.err)
		}
	}
}
