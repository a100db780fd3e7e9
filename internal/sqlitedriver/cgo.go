//go:build cgo && sqlite_fts5

package sqlitedriver

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/url"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// Name is the database/sql driver name: the cgo driver, built with -tags
// sqlite_fts5, faster on query-heavy loads (docs/benchmarks.md) at the
// price of cgo. It is mattn/go-sqlite3's driver, registered under a name
// of its own that runs the DSN's pragmas.
const Name = "clawledger-sqlite3"

func init() {
	sql.Register(Name, pragmaDriver{})
}

// pragmaDriver opens connections with mattn/go-sqlite3 and then runs the
// "_pragma=name(value)" parameters of the DSN as statements, in order, as
// the modernc driver does: mattn's driver has parameters of its own for
// some pragmas only (busy_timeout, journal_mode, ...) and silently ignores
// the others (temp_store, wal_autocheckpoint, journal_size_limit).
type pragmaDriver struct{}

func (pragmaDriver) Open(dsn string) (driver.Conn, error) {
	name, query, _ := strings.Cut(dsn, "?")
	var pragmas, rest []string
	for _, p := range strings.Split(query, "&") {
		if v, ok := strings.CutPrefix(p, "_pragma="); ok {
			v, err := url.QueryUnescape(v)
			if err != nil {
				return nil, err
			}
			pragmas = append(pragmas, v)
		} else if p != "" {
			rest = append(rest, p)
		}
	}
	if len(rest) > 0 {
		name += "?" + strings.Join(rest, "&")
	}
	conn, err := (&sqlite3.SQLiteDriver{}).Open(name)
	if err != nil {
		return nil, err
	}
	for _, p := range pragmas {
		if _, err := conn.(*sqlite3.SQLiteConn).Exec("PRAGMA "+p, nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// Code is the primary SQLite result code an error carries (SQLITE_CORRUPT
// is 11), or 0 for an error that carries none.
func Code(err error) int {
	var e sqlite3.Error
	if errors.As(err, &e) {
		return int(e.Code)
	}
	return 0
}
