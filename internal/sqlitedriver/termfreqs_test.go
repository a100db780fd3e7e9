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
	// the length asked of FTS5, read from the joined %_docsize, or given
	var (
		asked  = `SELECT f.rowid, ` + TermFreqs + `(f) FROM f`
		joined = `SELECT f.rowid, ` + TermFreqs + `(f, d.sz) FROM f LEFT JOIN f_docsize d ON d.id = f.rowid`
		given  = `SELECT f.rowid, ` + TermFreqs + `(f, x'8107') FROM f` // 135
		null   = `SELECT f.rowid, ` + TermFreqs + `(f, NULL) FROM f`
	)
	for _, c := range []struct {
		query, match string
		want         map[int64][]int // rowid: length, then each phrase's instances
	}{
		{asked, `"rolling restart"`, map[int64][]int{1: {9, 2}}},
		{asked, `"restart" OR "rolling"`, map[int64][]int{1: {9, 2, 3}, 2: {2, 1, 0}}},
		{asked, `"rest"* NOT "rolling"`, map[int64][]int{2: {2, 1, 0}}},
		{joined, `"rolling restart"`, map[int64][]int{1: {9, 2}}},
		{joined, `"restart" OR "rolling"`, map[int64][]int{1: {9, 2, 3}, 2: {2, 1, 0}}},
		{given, `"restart" OR "rolling"`, map[int64][]int{1: {135, 2, 3}, 2: {135, 1, 0}}},
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

func TestDocsizeLength(t *testing.T) {
	for _, c := range []struct {
		sz   []byte
		want uint32
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
