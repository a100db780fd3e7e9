package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/postgres"
)

const secret = "s3cr3t-pw-do-not-print"

// TestPasswordNeverShown: whatever fails (a DSN that does not parse, a CA
// file that is missing, a server that does not answer), the message names
// the ledger with its password masked.
func TestPasswordNeverShown(t *testing.T) {
	ctx := context.Background()
	cases := []string{
		"postgres://alice:" + secret + "@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=2",
		"postgres://alice:" + secret + "@127.0.0.1:1/ledger?sslmode=verify-full&sslrootcert=/no/such/ca.pem",
		"postgresql://alice@127.0.0.1:1/ledger?password=" + secret + "&sslmode=disable&connect_timeout=2",
		"postgres://alice:" + secret + "@127.0.0.1:1/ledger?sslmode=bogus",
		"postgres://alice:" + secret + "@[::1/ledger",
	}
	for _, dsn := range cases {
		loc, err := clawledger.ParseLocation(dsn)
		if err == nil {
			if strings.Contains(loc.String(), secret) {
				t.Errorf("the location shows the password: %s", loc)
			}
			_, err = loc.Open(ctx, clawledger.OpenOptions{Host: "h"})
		}
		if err == nil {
			t.Errorf("%s: opened", dsn)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), "xxxxx") && !strings.Contains(err.Error(), "alice@") {
			t.Errorf("the error does not say which ledger: %v", err)
		}
	}
}

// TestPasswordSources: the password may come from PGPASSWORD or the
// password file, as libpq reads them; a server that cannot be reached is
// unavailable, and its message does not show that password either.
func TestPasswordSources(t *testing.T) {
	ctx := context.Background()
	pass := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(pass, []byte("127.0.0.1:1:ledger:alice:"+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, env := range [][2]string{{"PGPASSWORD", secret}, {"PGPASSFILE", pass}} {
		t.Run(env[0], func(t *testing.T) {
			t.Setenv(env[0], env[1])
			_, err := postgres.Open(ctx, "postgres://alice@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=2", postgres.Options{Host: "h"})
			if err == nil || strings.Contains(err.Error(), secret) || clawledger.ErrorCode(err) != clawledger.EUNAVAILABLE {
				t.Errorf("%v (%s)", err, clawledger.ErrorCode(err))
			}
		})
	}
}
