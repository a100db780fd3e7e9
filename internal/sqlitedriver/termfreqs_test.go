//go:build !(cgo && sqlite_fts5)

package sqlitedriver

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
)

// TestTermFreqs: the auxiliary function gives each match's length and its
// phrases' instances, in the order of the MATCH expression, on a
// contentless table like the search index's.
func TestTermFreqs(t *testing.T) {
	db, err := sql.Open(Name, DSN(filepath.Join(t.TempDir(), "t.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE f USING fts5(text, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
		INSERT INTO f(rowid, text) VALUES (1, 'Rolling restart: a rolling restart of the ROLLING fleet'), (2, 'restart now'), (3, 'nothing here')`); err != nil {
		t.Fatal(err)
	}
	// the length asked of FTS5, or read from a search_lengths row: that of
	// row 1 is 135 there, row 2's is not in its row (FTS5 is asked)
	if _, err := db.Exec(`CREATE TABLE l(block INTEGER PRIMARY KEY, lens BLOB); INSERT INTO l VALUES (0, x'00008700')`); err != nil {
		t.Fatal(err)
	}
	var (
		asked   = `SELECT f.rowid, ` + TermFreqs + `(f) FROM f`
		blocked = `SELECT f.rowid, ` + TermFreqs + `(f, l.lens) FROM f LEFT JOIN l ON l.block = f.rowid / 1024`
		null    = `SELECT f.rowid, ` + TermFreqs + `(f, NULL) FROM f`
	)
	for _, c := range []struct {
		query, match string
		want         map[int64][]int // rowid: length, then each phrase's instances
	}{
		{asked, `"rolling restart"`, map[int64][]int{1: {9, 2}}},
		{asked, `"restart" OR "rolling"`, map[int64][]int{1: {9, 2, 3}, 2: {2, 1, 0}}},
		{asked, `"rest"* NOT "rolling"`, map[int64][]int{2: {2, 1, 0}}},
		{blocked, `"restart" OR "rolling"`, map[int64][]int{1: {135, 2, 3}, 2: {2, 1, 0}}},
		{null, `"restart" OR "rolling"`, map[int64][]int{1: {9, 2, 3}, 2: {2, 1, 0}}},
	} {
		rows, err := db.Query(c.query+` WHERE f MATCH ? ORDER BY f.rowid DESC`, c.match)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64][]int{}
		for rows.Next() {
			var id int64
			var b []byte
			if err := rows.Scan(&id, &b); err != nil {
				t.Fatal(err)
			}
			n, tfs := DecodeTermFreqs(b, nil)
			got[id] = append([]int{n}, tfs...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if len(got) != len(c.want) {
			t.Errorf("%s %s: %v, want %v", c.query, c.match, got, c.want)
		}
		for id, w := range c.want {
			if !slices.Equal(got[id], w) {
				t.Errorf("%s %s: row %d: %v, want %v", c.query, c.match, id, got[id], w)
			}
		}
	}
}

func TestBlockLength(t *testing.T) {
	var lens []byte
	for _, p := range []struct {
		id     int64
		tokens int
	}{{LengthBlock + 3, 7}, {2*LengthBlock - 1, 1600}, {LengthBlock + 5, 70000}, {LengthBlock + 3, 9}} {
		lens = PutBlockLength(lens, p.id, p.tokens)
	}
	if len(lens) != 2*LengthBlock {
		t.Errorf("%d bytes, want %d", len(lens), 2*LengthBlock)
	}
	for _, c := range []struct {
		id   int64
		want int
		ok   bool
	}{
		{LengthBlock + 3, 9, true},      // set twice: the last
		{2*LengthBlock - 1, 1600, true}, // the block's last
		{LengthBlock + 5, 0, false},     // too long for a uint16: not known
		{LengthBlock + 4, 0, false},     // never set
		{-1, 0, false},
	} {
		if got, ok := BlockLength(lens, c.id); got != c.want || ok != c.ok {
			t.Errorf("%d: %d %v, want %d %v", c.id, got, ok, c.want, c.ok)
		}
	}
	if _, ok := BlockLength(lens[:8], LengthBlock+4); ok {
		t.Error("a length past the blob's end is known")
	}
}

func TestDocsizeLength(t *testing.T) {
	for _, c := range []struct {
		sz   []byte
		want int
		ok   bool
	}{
		{[]byte{0x05}, 5, true},
		{[]byte{0x00}, 0, true},
		{[]byte{0x7f, 0x09}, 127, true}, // the first column's; the rest ignored
		{[]byte{0x81, 0x00}, 128, true},
		{[]byte{0x81, 0x07}, 135, true},
		{[]byte{0xff, 0xff, 0xff, 0x7f}, 1<<28 - 1, true},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x7f}, 0, false}, // too large
		{[]byte{0x81}, 0, false},                         // cut short
		{nil, 0, false},
	} {
		if got, ok := DocsizeLength(c.sz); got != c.want || ok != c.ok {
			t.Errorf("% x: %d %v, want %d %v", c.sz, got, ok, c.want, c.ok)
		}
	}
}
