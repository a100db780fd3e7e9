package ledger

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/clawledger/clawledger"
)

// session is what a session reference resolved to: the transcripts of one
// session that it names (a session id names them all: the live file, its
// archives and forks; a path names one).
type session struct {
	ref         string
	transcripts []*clawledger.Session
}

// resolve finds the one session a reference names: a session id, a unique
// prefix of one, or a transcript path relative to its state dir; with an
// agent, only that agent's sessions are seen (another agent's are not
// found and never named), with state dirs (nil: all) only theirs. A
// reference that matches nothing is not found (clawledger.ErrNoSession); one
// that matches several sessions is invalid and names them.
func resolve(ctx context.Context, r clawledger.Reader, ref, agent string, dirs []string) (*session, error) {
	list, err := r.FindSessions(ctx, ref)
	if err != nil {
		return nil, err
	}
	if dirs != nil { // only the sessions of these state dirs
		list = slices.DeleteFunc(list, func(s *clawledger.Session) bool { return !slices.Contains(dirs, s.StateDir) })
	}
	if agent != "" {
		list = slices.DeleteFunc(list, func(s *clawledger.Session) bool { return s.AgentID != agent })
		if len(list) == 0 {
			return nil, clawledger.Reasonf(clawledger.ENOTFOUND, clawledger.ErrNoSession, "no session of agent %s matches %q", agent, ref)
		}
	}
	if len(list) == 0 {
		return nil, clawledger.Reasonf(clawledger.ENOTFOUND, clawledger.ErrNoSession, "no session matches %q", ref)
	}
	ids, hosts := map[string]bool{}, map[string]bool{}
	for _, s := range list {
		ids[s.SessionID], hosts[s.Host] = true, true
	}
	if len(ids) > 1 {
		return nil, clawledger.Errorf(clawledger.EINVALID, "%q matches %d sessions: %s", ref, len(ids), strings.Join(slices.Sorted(maps.Keys(ids)), ", "))
	}
	if len(hosts) > 1 { // a ledger of many hosts: the same session id on two of them
		return nil, clawledger.FieldErrorf("host", ": %q is a session of %d hosts (%s): name one", ref, len(hosts), strings.Join(slices.Sorted(maps.Keys(hosts)), ", "))
	}
	return &session{ref: ref, transcripts: list}, nil
}

// sourceIDs are the session's transcripts.
func (s *session) sourceIDs() []int64 {
	out := make([]int64, len(s.transcripts))
	for i, t := range s.transcripts {
		out[i] = t.SourceID
	}
	return out
}

// transcript is the one transcript the reference names: the only one, or
// the live one a full session id names; else it is invalid and names
// their paths.
func (s *session) transcript() (*clawledger.Session, error) {
	first := s.transcripts[0]
	if len(s.transcripts) == 1 || first.SessionID == s.ref && first.Class != clawledger.ClassDeleted && first.Class != clawledger.ClassReset && !first.Gone {
		return first, nil
	}
	var names []string
	for _, t := range s.transcripts {
		names = append(names, t.Path)
	}
	return nil, clawledger.Errorf(clawledger.EINVALID, "%q matches %d transcripts; name one by its path: %s", s.ref, len(s.transcripts), strings.Join(names, ", "))
}
