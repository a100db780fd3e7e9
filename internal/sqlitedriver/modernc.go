//go:build !(cgo && sqlite_fts5)

// Package sqlitedriver is the one place that names the SQLite driver: the
// pure-Go modernc.org/sqlite by default, or mattn/go-sqlite3 (SQLite's C
// code through cgo) when built with -tags sqlite_fts5. The ledger store,
// the reader of OpenClaw's databases, the fixtures and the benchmarks all
// open databases through it, so a build links exactly one driver.
package sqlitedriver

import (
	"errors"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Name is the database/sql driver name.
const Name = "sqlite"

// Code is the primary SQLite result code an error carries (SQLITE_CORRUPT
// is 11), or 0 for an error that carries none.
func Code(err error) int {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code() & 0xff
	}
	return 0
}
