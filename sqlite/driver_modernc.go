//go:build !(cgo && sqlite_fts5)

package sqlite

import (
	"net/url"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// driverName is the pure-Go driver (the default build).
const driverName = "sqlite"

// dsn builds a modernc.org/sqlite connection string; params are
// "_pragma=name(value)" and "_txlock=immediate".
func dsn(path string, params ...string) string {
	u := url.URL{Scheme: "file", Path: path}
	return u.String() + "?" + strings.Join(params, "&")
}
