//go:build cgo && sqlite_fts5

package sqlite

import (
	"net/url"
	"strings"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// driverName is the cgo driver, built with -tags sqlite_fts5: SQLite's C
// code compiled by the C compiler, faster on query-heavy loads (see
// docs/benchmarks.md) at the price of cgo.
const driverName = "sqlite3"

// dsn builds a mattn/go-sqlite3 connection string from the modernc-style
// parameters the store uses: "_pragma=name(value)" becomes "_name=value".
func dsn(path string, params ...string) string {
	u := url.URL{Scheme: "file", Path: path}
	out := make([]string, 0, len(params))
	for _, p := range params {
		if rest, ok := strings.CutPrefix(p, "_pragma="); ok {
			name, value, _ := strings.Cut(strings.TrimSuffix(rest, ")"), "(")
			p = "_" + name + "=" + value
		}
		out = append(out, p)
	}
	return u.String() + "?" + strings.Join(out, "&")
}
