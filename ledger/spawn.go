package ledger

import (
	"context"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/view"
)

// Sub-agent runs link a requester session to the child session it
// spawned (subagents/runs.json, or the state database's subagent_runs),
// by their session keys within a state dir. Sessions and Show show them:
// each session the run that spawned it and the runs it spawned, and
// Sessions can order its list as the tree they make.

// spawnKey is a session key within a state dir.
type spawnKey struct{ stateDir, key string }

// spawns are the sub-agent runs of a ledger by requester and by child.
type spawns struct {
	byRequester map[spawnKey][]clawledger.SubagentLink
	byChild     map[spawnKey]clawledger.SubagentLink
	ids         map[spawnKey]string // session keys -> the session id of their transcript
}

// readSpawns reads every sub-agent run of a store that keeps them (none
// otherwise).
func readSpawns(ctx context.Context, r clawledger.Reader) (*spawns, error) {
	sp := &spawns{byRequester: map[spawnKey][]clawledger.SubagentLink{}, byChild: map[spawnKey]clawledger.SubagentLink{},
		ids: map[spawnKey]string{}}
	ar, ok := r.(clawledger.AuditReader)
	if !ok {
		return sp, nil
	}
	links, err := ar.SubagentLinks(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		req := spawnKey{l.StateDir, l.RequesterSessionKey}
		sp.byRequester[req] = append(sp.byRequester[req], l)
		sp.byChild[spawnKey{l.StateDir, l.ChildSessionKey}] = l
	}
	return sp, nil
}

func (sp *spawns) none() bool { return len(sp.byChild) == 0 }

// know records the transcripts of sessions the ledger holds, by key, so
// that a run names the session on its other side by id.
func (sp *spawns) know(list []*clawledger.Session) {
	for _, s := range list {
		k := spawnKey{s.StateDir, s.Key}
		if _, ok := sp.ids[k]; !ok && s.Key != "" {
			sp.ids[k] = s.SessionID
		}
	}
}

// knowAll records every transcript the ledger holds, when any run names
// one of these sessions (a session shown alone, or a page of a list).
func (sp *spawns) knowAll(ctx context.Context, r clawledger.Reader, list []*clawledger.Session) error {
	linked := false
	for _, s := range list {
		k := spawnKey{s.StateDir, s.Key}
		_, child := sp.byChild[k]
		linked = linked || child || len(sp.byRequester[k]) > 0
	}
	if !linked {
		return nil
	}
	all, err := r.Sessions(ctx, clawledger.SessionFilter{IncludeDeleted: true})
	if err != nil {
		return err
	}
	sp.know(all)
	return nil
}

// attach fills a session's spawned_by and spawned.
func (sp *spawns) attach(v *view.Session) {
	if v.Key == "" {
		return
	}
	k := spawnKey{v.StateDir, v.Key}
	if l, ok := sp.byChild[k]; ok {
		by := view.NewSpawn(l, l.RequesterSessionKey, sp.ids[spawnKey{k.stateDir, l.RequesterSessionKey}])
		v.SpawnedBy = &by
	}
	for _, l := range sp.byRequester[k] {
		v.Spawned = append(v.Spawned, view.NewSpawn(l, l.ChildSessionKey, sp.ids[spawnKey{k.stateDir, l.ChildSessionKey}]))
	}
}

// tree orders sessions as the spawn tree: each session a listed session
// spawned follows it (depth first, in the list's order), with its depth;
// the others keep their order. A session whose requester is not listed is
// a root.
func (sp *spawns) tree(list []view.Session) []view.Session {
	first := map[spawnKey]int{} // a key's first transcript in the list: the tree's node
	for i, v := range list {
		if k := (spawnKey{v.StateDir, v.Key}); v.Key != "" {
			if _, ok := first[k]; !ok {
				first[k] = i
			}
		}
	}
	parent := func(v view.Session) (int, bool) {
		if v.SpawnedBy == nil {
			return 0, false
		}
		i, ok := first[spawnKey{v.StateDir, v.SpawnedBy.SessionKey}]
		return i, ok
	}
	children := map[int][]int{}
	for i, v := range list {
		if p, ok := parent(v); ok && p != i {
			children[p] = append(children[p], i)
		}
	}
	out := make([]view.Session, 0, len(list))
	done := make([]bool, len(list))
	var walk func(i, depth int)
	walk = func(i, depth int) {
		if done[i] {
			return // a cycle of runs (written by hand) ends here
		}
		done[i] = true
		v := list[i]
		v.Depth = depth
		out = append(out, v)
		for _, c := range children[i] {
			walk(c, depth+1)
		}
	}
	for i, v := range list {
		if p, ok := parent(v); !ok || p == i {
			walk(i, 0)
		}
	}
	for i := range list { // a cycle with no root in the list
		walk(i, 0)
	}
	return out
}

// showSpawns fills the sub-agent runs of the listed sessions (out, built
// from list), and orders them as the spawn tree with tree.
func showSpawns(ctx context.Context, r clawledger.Reader, list []*clawledger.Session, out []view.Session, tree bool) ([]view.Session, error) {
	sp, err := readSpawns(ctx, r)
	if err != nil || sp.none() {
		return out, err
	}
	if err := sp.knowAll(ctx, r, list); err != nil {
		return nil, err
	}
	for i := range out {
		sp.attach(&out[i])
	}
	if tree {
		out = sp.tree(out)
	}
	return out, nil
}
