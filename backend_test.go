package clawledger_test

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	_ "github.com/clawledger/clawledger/sqlite" // the file and sqlite schemes
)

func TestParseLocation(t *testing.T) {
	wd, _ := os.Getwd()
	for _, c := range []struct {
		in     string
		scheme string
		path   string // "" when an error is wanted
		err    string
	}{
		{in: "ledger.db", scheme: "file", path: filepath.Join(wd, "ledger.db")},
		{in: "/var/l.db", scheme: "file", path: "/var/l.db"},
		{in: "file:l.db", scheme: "file", path: filepath.Join(wd, "l.db")},
		{in: "file:///var/l.db", scheme: "file", path: "/var/l.db"},
		{in: "sqlite:///var/l%20x.db", scheme: "sqlite", path: "/var/l x.db"},
		{in: "SQLite:rel/l.db", scheme: "sqlite", path: filepath.Join(wd, "rel", "l.db")},
		{in: "sqlite://localhost/var/l.db", scheme: "sqlite", path: "/var/l.db"},
		{in: "sqlite://host/var/l.db", err: "takes no host"},
		{in: "sqlite://user:s3cretpw@host/l.db", err: "sqlite://user:xxxxx@host/l.db: a sqlite: URL names a local file"},
		{in: "file:l.db?mode=ro", err: "takes no parameters"},
		{in: "sqlite://", err: "no file path"},
		{in: "", err: "no ledger location"},
		{in: "postgres://user:s3cretpw@host/db", err: `postgres://user:xxxxx@host/db: no ledger backend for the "postgres" scheme (this clawledger knows file, sqlite, or a file path)`},
		{in: "postgres://host/db?password=s3cretpw&sslmode=require", err: "password=xxxxx"},
		{in: "postgres://user:s3cretpw@host/%zz", err: "postgres://user:xxxxx@host/%zz: not a URL"},
	} {
		loc, err := clawledger.ParseLocation(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || clawledger.ErrorCode(err) != clawledger.EINVALID {
				t.Errorf("%q: %v, want an invalid location error with %q", c.in, err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), "s3cretpw") {
				t.Errorf("%q: the error shows the password: %v", c.in, err)
			}
			continue
		}
		if err != nil || loc.Scheme != c.scheme || loc.Path != c.path {
			t.Errorf("%q: %+v %v, want scheme %s path %s", c.in, loc, err, c.scheme, c.path)
		}
	}
	_, err := clawledger.ParseLocation("postgres://u:p@h/d")
	if !errors.Is(err, clawledger.ErrUnknownScheme) {
		t.Errorf("an unknown scheme: %v", err)
	}
}

// TestRedactURL: a password is masked wherever a URL holds it, as
// "xxxxx": never labelled by a redaction kind ([EMAIL] for user:pw@host).
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://user:pw@db.example.com:5432/ledger":         "postgres://user:xxxxx@db.example.com:5432/ledger",
		"postgres://user@host/db":                               "postgres://user@host/db",
		"postgres://host/db?sslmode=verify-full&password=pw":    "postgres://host/db?password=xxxxx&sslmode=verify-full",
		"postgres://host/db?sslpassword=pw&application_name=cl": "postgres://host/db?application_name=cl&sslpassword=xxxxx",
		"sqlite:///var/ledger.db":                               "sqlite:///var/ledger.db",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := clawledger.RedactURL(u); got != want {
			t.Errorf("RedactURL(%s) = %s, want %s", in, got, want)
		}
	}
}
