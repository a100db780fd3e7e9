package ledger

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

// TestSpawnTree: sessions listed as the spawn tree follow the session that
// spawned them (depth first, in the list's order), with their depth; a
// session whose requester is not listed, or is in another state dir, is a
// root; a cycle of runs ends where it closes; nothing is lost or repeated.
func TestSpawnTree(t *testing.T) {
	link := func(dir, requester, child string) clawledger.SubagentLink {
		return clawledger.SubagentLink{StateDir: dir, RunID: requester + ">" + child, RequesterSessionKey: requester, ChildSessionKey: child}
	}
	for _, c := range []struct {
		name  string
		list  []string // state dir/key, newest first
		links []clawledger.SubagentLink
		want  string // key:depth in order
	}{
		{"no runs", []string{"d/a", "d/b"}, nil, "a:0 b:0"},
		{"a child after its parent", []string{"d/c", "d/p", "d/x"}, []clawledger.SubagentLink{link("d", "p", "c")}, "p:0 c:1 x:0"},
		{"grandchildren", []string{"d/g", "d/c", "d/p"}, []clawledger.SubagentLink{link("d", "p", "c"), link("d", "c", "g")}, "p:0 c:1 g:2"},
		{"two children in list order", []string{"d/c2", "d/p", "d/c1"}, []clawledger.SubagentLink{link("d", "p", "c1"), link("d", "p", "c2")},
			"p:0 c2:1 c1:1"},
		{"requester not listed", []string{"d/c"}, []clawledger.SubagentLink{link("d", "p", "c")}, "c:0"},
		{"requester in another state dir", []string{"d/c", "e/p"}, []clawledger.SubagentLink{link("d", "p", "c")}, "c:0 p:0"},
		{"a cycle", []string{"d/a", "d/b"}, []clawledger.SubagentLink{link("d", "a", "b"), link("d", "b", "a")}, "a:0 b:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := &spawns{byRequester: map[spawnKey][]clawledger.SubagentLink{}, byChild: map[spawnKey]clawledger.SubagentLink{}, ids: map[spawnKey]string{}}
			for _, l := range c.links {
				k := spawnKey{l.StateDir, l.RequesterSessionKey}
				sp.byRequester[k] = append(sp.byRequester[k], l)
				sp.byChild[spawnKey{l.StateDir, l.ChildSessionKey}] = l
			}
			var list []view.Session
			for _, s := range c.list {
				dir, key, _ := strings.Cut(s, "/")
				v := view.Session{StateDir: dir, Key: key}
				sp.attach(&v)
				list = append(list, v)
			}
			var got []string
			for _, v := range sp.tree(list) {
				got = append(got, fmt.Sprintf("%s:%d", v.Key, v.Depth))
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("got %q, want %q", strings.Join(got, " "), c.want)
			}
		})
	}
}
