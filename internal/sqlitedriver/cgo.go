//go:build cgo && sqlite_fts5

package sqlitedriver

import (
	"net/url"
	"strings"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// Name is the database/sql driver name: the cgo driver, built with -tags
// sqlite_fts5, faster on query-heavy loads (docs/benchmarks.md) at the
// price of cgo.
const Name = "sqlite3"

// DSN builds a mattn/go-sqlite3 connection string from the parameters the
// modernc build takes: "_pragma=name(value)" becomes "_name=value"; SQLite
// URI parameters pass through.
func DSN(path string, params ...string) string {
	u := url.URL{Scheme: "file", Path: path}
	out := make([]string, 0, len(params))
	for _, p := range params {
		if rest, ok := strings.CutPrefix(p, "_pragma="); ok {
			name, value, _ := strings.Cut(strings.TrimSuffix(rest, ")"), "(")
			p = "_" + name + "=" + value
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return u.String()
	}
	return u.String() + "?" + strings.Join(out, "&")
}
