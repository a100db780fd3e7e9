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
	for _, c := range []struct {
		match string
		want  map[int64][]int // rowid: length, then each phrase's instances
	}{
		{`"rolling restart"`, map[int64][]int{1: {9, 2}}},
		{`"restart" OR "rolling"`, map[int64][]int{1: {9, 2, 3}, 2: {2, 1, 0}}},
		{`"rest"* NOT "rolling"`, map[int64][]int{2: {2, 1, 0}}},
	} {
		rows, err := db.Query(`SELECT rowid, `+TermFreqs+`(f) FROM f WHERE f MATCH ? ORDER BY rowid DESC`, c.match)
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
			t.Errorf("%s: %v, want %v", c.match, got, c.want)
		}
		for id, w := range c.want {
			if !slices.Equal(got[id], w) {
				t.Errorf("%s: row %d: %v, want %v", c.match, id, got[id], w)
			}
		}
	}
}
