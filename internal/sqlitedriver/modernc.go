//go:build !(cgo && sqlite_fts5)

// Package sqlitedriver is the one place that names the SQLite driver: the
// pure-Go modernc.org/sqlite by default, or mattn/go-sqlite3 (SQLite's C
// code through cgo) when built with -tags sqlite_fts5. The ledger store,
// the reader of OpenClaw's databases, the fixtures and the benchmarks all
// open databases through it, so a build links exactly one driver.
package sqlitedriver

import (
	"net/url"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Name is the database/sql driver name.
const Name = "sqlite"

// DSN builds a connection string for the database at path. params are
// SQLite URI parameters (mode=ro, immutable=1), "_pragma=name(value)" and
// "_txlock=immediate".
func DSN(path string, params ...string) string {
	u := url.URL{Scheme: "file", Path: path}
	if len(params) == 0 {
		return u.String()
	}
	return u.String() + "?" + strings.Join(params, "&")
}
