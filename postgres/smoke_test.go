package postgres_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clawledger/clawledger/collect"
	"github.com/clawledger/clawledger/internal/fixture"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/postgres"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	db, err := postgres.Open(ctx, dsn, postgres.Options{Host: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	home := t.TempDir()
	m, err := fixture.WriteEdgeCases(home)
	if err != nil {
		t.Fatal(err)
	}
	c := &collect.Collector{Store: db, FS: openclaw.OS}
	rep, err := c.Run(ctx, m.StateDirs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep)
	st, err := db.Status(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", st)
	_ = filepath.Join
}
