package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/internal/pgtest"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/postgres"
	_ "github.com/clawledger/clawledger/sqlite" // the reference ledger's backend
)

// pgvectorDatabase creates a database of its own on the test server (the
// vector extension is the database's), dropped when the test ends, and
// returns its DSN; it skips the test when the server has no pgvector.
func pgvectorDatabase(t *testing.T) string {
	t.Helper()
	server := pgtest.Server(t)
	var n int
	conn, err := pgx.Connect(context.Background(), server)
	if err != nil {
		t.Fatal(err)
	}
	err = conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'`).Scan(&n)
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Skip("the test server has no pgvector (Debian 12 does not package it): build it from source " +
			"(postgresql-server-dev-15, then make && make install in github.com/pgvector/pgvector) to test the pgvector path")
	}
	var b [6]byte
	rand.Read(b[:])
	name := "clawledger_pgvector_" + hex.EncodeToString(b[:])
	pgtest.Exec(t, server, `CREATE DATABASE `+name)
	t.Cleanup(func() { pgtest.Exec(t, server, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	// the ledger in a schema of its own, the extension in public: its type
	// and operator are named with their schema
	return pgtest.InSchema(t, u.String(), pgtest.NewSchema(t, u.String()))
}

// TestPGVector: with pgvector in the ledger's database, the vectors stored
// before it was there are given to it by the next writer, those stored
// after go to it too, and the server finds the nearest ones: vector and
// hybrid searches answer as the in-process scan of the SQLite ledger does.
func TestPGVector(t *testing.T) {
	ctx := context.Background()
	dsn := pgvectorDatabase(t)
	dirs := fixtures(t)["sample"]
	model := filepath.Join(t.TempDir(), "model")
	words := []string{"[PAD]", "[UNK]", "backup", "backups", "copies", "release", "shipping", "eastore", "disk", "nightly", "deploy"}
	rows := make([][]float32, len(words))
	for i := range rows {
		rows[i] = make([]float32, 8)
		rows[i][i%8] = 1
		rows[i][(i*3+1)%8] += 0.5
	}
	if err := searchbench.WriteStaticModel(model, words, rows); err != nil {
		t.Fatal(err)
	}
	service := func(loc string) *ledger.Service {
		l, err := clawledger.ParseLocation(loc)
		if err != nil {
			t.Fatal(err)
		}
		l.Host = "h"
		s := &ledger.Service{Location: l, StateDirs: func() ([]string, error) { return dirs, nil }, Name: "test"}
		t.Cleanup(func() { s.Close() })
		return s
	}
	lite, pg := service(filepath.Join(t.TempDir(), "ledger.db")), service(dsn)
	for _, s := range []*ledger.Service{lite, pg} {
		if _, err := s.Ingest(ctx, ledger.IngestRequest{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Embed(ctx, ledger.EmbedRequest{Config: embed.Config{Provider: "static", ModelDir: model}}); err != nil {
			t.Fatal(err)
		}
	}
	searches := func(t *testing.T) {
		t.Helper()
		for _, q := range []ledger.SearchRequest{
			{Query: "nightly copies", Mode: "vector", Limit: 5, Explain: true},
			{Query: "shipping eastore", Mode: "hybrid", Limit: 5, Explain: true},
			{Query: "disk", Mode: "vector", Agent: "ops", Limit: 3, Explain: true},
			{Query: "deploy", Limit: 4, Source: "sessions", Explain: true},
		} {
			q.Fusion, q.MMRLambda, q.HalfLifeDays, q.Now = "weighted", 0.7, 30, 1_800_000_000_000
			want, err := lite.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pg.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Hits) != len(want.Hits) || len(want.Hits) == 0 {
				t.Fatalf("%q: %d hits, want %d (> 0)", q.Query, len(got.Hits), len(want.Hits))
			}
			for i := range want.Hits {
				w, g := want.Hits[i], got.Hits[i]
				if g.Path != w.Path || g.Line != w.Line || g.StartLine != w.StartLine || abs(g.Score-w.Score) > 1e-5 {
					t.Errorf("%q hit %d: %s:%d (%.6f), want %s:%d (%.6f)", q.Query, i, g.Path, g.Line, g.Score, w.Path, w.Line, w.Score)
				}
			}
		}
	}
	// without pgvector: the vectors are scanned in process
	t.Run("fallback", searches)
	if r := openReader(t, dsn); r.PGVector() {
		t.Fatal("pgvector in use before the extension was created")
	}

	// the extension arrives: the next writer gives it the stored vectors
	pgtest.Exec(t, dsn, `CREATE EXTENSION vector`)
	w := openPG(t, dsn, "h")
	if !w.PGVector() {
		t.Fatal("a writer did not take up pgvector")
	}
	w.Close()
	r := openReader(t, dsn)
	if !r.PGVector() {
		t.Fatal("a reader did not take up pgvector")
	}
	pg.Close() // its next search opens the ledger afresh, with pgvector
	// the blobs spoilt: a search that loaded them would fail (one dimension, not 8)
	pgtest.Exec(t, dsn, `UPDATE search_vectors SET vec = '\x00000000'::bytea`)
	t.Run("pgvector", searches)
	near, err := r.Nearest(ctx, make([]float32, 8), 1, &clawledger.SearchFilter{})
	if err != nil || len(near) != 1 {
		t.Fatalf("Nearest: %v, %v", near, err)
	}

	// vectors stored with pgvector there: another model's, every chunk re-embedded
	for i := range rows {
		rows[i][(i+5)%8] += 1
	}
	if err := searchbench.WriteStaticModel(model+"2", words, rows); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*ledger.Service{lite, pg} {
		if _, err := s.Embed(ctx, ledger.EmbedRequest{Config: embed.Config{Provider: "static", ModelDir: model + "2"}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("pgvector-reembedded", searches)
}

func openReader(t *testing.T, dsn string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), dsn, postgres.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
