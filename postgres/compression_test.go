package postgres_test

import (
	"testing"

	"github.com/clawledger/clawledger/internal/pgtest"
)

// TestTextCompressedWithLZ4: on a server built with lz4 (Debian's), the
// ledger's large columns are compressed with it, not with pglz, the
// default (migrations 00001, 00015, 00016: pglz cost the server 6% of its
// CPU in a first ingest).
func TestTextCompressedWithLZ4(t *testing.T) {
	dsn := pgtest.DSN(t)
	openPG(t, dsn, "a")
	if queryInt(t, dsn, `SELECT ('lz4' = ANY (SELECT unnest(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'))::int`) == 0 {
		t.Skip("the server has no lz4")
	}
	for _, c := range []struct{ table, column string }{
		{"lines", "raw"}, {"lines", "text"}, {"lines", "error"}, {"lines", "error_message"}, {"lines", "error_text"},
		{"search_chunks", "text"}, {"search_postings", "ids"}, {"search_postings", "pos"},
	} {
		if queryInt(t, dsn, `SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass('`+c.table+`')
			AND attname = '`+c.column+`' AND attcompression = 'l'`) != 1 {
			t.Errorf("%s.%s: not compressed with lz4", c.table, c.column)
		}
	}
}
