package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clawledger/clawledger/internal/pgtest"
)

// TestTextCompressedWithLZ4: on a server built with lz4 (Debian's), the
// ledger's large columns are compressed with it, not with pglz, the
// default (migrations 00001, 00015, 00016: pglz cost the server 6% of its
// CPU in a first ingest).
func TestTextCompressedWithLZ4(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	openPG(t, dsn, "a")
	conn, err := pgx.Connect(ctx, dsn)
	check(t, err)
	defer conn.Close(ctx)
	var lz4 bool
	check(t, conn.QueryRow(ctx, `SELECT 'lz4' = ANY (SELECT unnest(enumvals) FROM pg_settings WHERE name = 'default_toast_compression')`).Scan(&lz4))
	if !lz4 {
		t.Skip("the server has no lz4")
	}
	for _, c := range []struct{ table, column string }{
		{"lines", "raw"}, {"lines", "text"}, {"lines", "error"}, {"lines", "error_message"}, {"lines", "error_text"},
		{"search_chunks", "text"}, {"search_postings", "ids"}, {"search_postings", "pos"},
	} {
		var method string
		check(t, conn.QueryRow(ctx, `SELECT attcompression::text FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2`,
			c.table, c.column).Scan(&method))
		if method != "l" {
			t.Errorf("%s.%s: compression %q, want lz4 (l)", c.table, c.column, method)
		}
	}
}
