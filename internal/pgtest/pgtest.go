// Package pgtest gives each test a ledger of its own on the PostgreSQL
// server named by CLAWLEDGER_TEST_POSTGRES: a schema created for the test
// and dropped after it, so tests run in parallel on one server.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger/internal/testenv"
)

// Env names the variable holding the test server's DSN.
const Env = "CLAWLEDGER_TEST_POSTGRES"

// Server returns the test server's DSN, skipping the test when none is set.
func Server(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		testenv.NoService(t, Env+" is not set: run scripts/test-services.sh go test ./... (it starts a throwaway PostgreSQL server), "+
			"or set "+Env+" to a postgres:// URL of a server you may create schemas on")
	}
	return dsn
}

// DSN creates a schema of its own for the test on the test server and
// returns a DSN whose search_path is that schema; the schema is dropped
// when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := Server(t)
	return InSchema(t, dsn, NewSchema(t, dsn))
}

// NewSchema creates a fresh schema on the server at dsn, dropped when the
// test ends, and returns its name.
func NewSchema(t testing.TB, dsn string) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	Exec(t, dsn, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { Exec(t, dsn, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`) })
	return schema
}

// InSchema returns dsn with its search_path set to schema.
func InSchema(t testing.TB, dsn, schema string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Exec runs statements on the server at dsn, failing the test on error.
func Exec(t testing.TB, dsn string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
