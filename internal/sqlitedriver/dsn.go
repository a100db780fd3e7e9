package sqlitedriver

import (
	"net/url"
	"strings"
)

// DSN builds a connection string for the database at path. params are
// SQLite URI parameters (mode=ro, immutable=1), "_pragma=name(value)" (run
// as "PRAGMA name(value)" on every new connection, in order) and
// "_txlock=immediate".
func DSN(path string, params ...string) string {
	u := url.URL{Scheme: "file", Path: path}
	if len(params) == 0 {
		return u.String()
	}
	return u.String() + "?" + strings.Join(params, "&")
}

// Primary SQLite result codes the ledger acts on.
const (
	CodeReadOnly = 8  // SQLITE_READONLY
	CodeCorrupt  = 11 // SQLITE_CORRUPT
	CodeCantOpen = 14 // SQLITE_CANTOPEN
	CodeNotADB   = 26 // SQLITE_NOTADB
)
