package storekit

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/clawledger/clawledger"
)

func TestNewestMigration(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  int64
	}{
		{"none", nil, 0},
		{"newest by number", []string{"00002_b.sql", "00010_j.sql", "00009_i.sql"}, 10},
		{"not a migration", []string{"00003_c.sql", "README.sql", "00020_t.txt"}, 3},
	} {
		fsys := fstest.MapFS{}
		for _, f := range tc.files {
			fsys["migrations/"+f] = &fstest.MapFile{}
		}
		if got := NewestMigration(fsys); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestLikeEscape(t *testing.T) {
	if got, want := LikeEscape(`a_b%c\d`), `a\_b\%c\\d`; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

func TestSessionStateFields(t *testing.T) {
	var m string
	cols := strings.Split(strings.Join(strings.Fields(SessionStateColumns), " "), ", ")
	if n := len(SessionStateFields(&clawledger.Session{}, &m)); n != len(cols) {
		t.Fatalf("%d fields for %d columns", n, len(cols))
	}
}
