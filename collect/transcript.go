package collect

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

// transcript derives a session's summary and each record's resolved fields
// (synthetic ids, attributed model, usage key) from its entries in file
// order. Its state lives in the Session, so an incremental batch continues
// exactly where the previous one stopped.
type transcript struct {
	s *clawledger.Session
}

func (t *transcript) apply(rec *clawledger.Record) {
	s := t.s
	if rec.Line.Status == clawledger.LineMalformed {
		s.Malformed++
	}
	e := rec.Entry
	if e == nil {
		return
	}
	if h := e.Header; h != nil {
		if s.Version == "" {
			s.Version = h.Version
		}
		if h.ID != "" {
			s.SessionID = h.ID
		}
		s.Cwd = cmp.Or(s.Cwd, h.Cwd)
		s.ParentSession = cmp.Or(s.ParentSession, h.ParentSession)
		if s.StartedAt == 0 {
			s.StartedAt = h.Timestamp
		}
		if h.ModelID != "" && s.Model == "" { // v1 headers carry the model
			s.Provider, s.Model = h.Provider, h.ModelID
		}
		if h.ThinkingLevel != "" && s.ThinkingLevel == "" {
			s.ThinkingLevel = h.ThinkingLevel
		}
		t.seen(e.Timestamp)
		return
	}

	// v1 files have no ids: a stable synthetic id per line and a linear chain
	rec.EntryID, rec.ParentID = e.ID, e.ParentID
	if rec.EntryID == "" {
		rec.EntryID = "line-" + strconv.FormatInt(rec.Line.No, 10)
	}
	if !e.HasParent && e.ID == "" {
		rec.ParentID = s.LastEntryID
	}
	s.LastEntryID = rec.EntryID
	s.LeafID = rec.EntryID
	if e.LeafTarget != "" {
		s.LeafID = e.LeafTarget
	}
	s.Entries++

	switch {
	case e.ModelChange != nil:
		mc := e.ModelChange
		switch mc.Kind {
		case "thinking":
			s.ThinkingLevel = mc.ThinkingLevel
		default:
			if mc.ModelID != "" {
				s.Provider, s.Model = mc.Provider, mc.ModelID
			}
			if mc.API != "" {
				s.API = mc.API
			}
		}
	case e.Compaction != nil:
		if e.Compaction.Kind == "compaction" {
			s.Compactions++
		}
	case e.SessionName != "":
		s.Name = e.SessionName
	}
	if m := e.Message; m != nil {
		t.message(rec, m)
		t.seen(cmp.Or(m.Timestamp, e.Timestamp))
	} else {
		t.seen(e.Timestamp)
	}
}

func (t *transcript) seen(ts int64) {
	s := t.s
	if ts == 0 {
		return
	}
	if s.FirstAt == 0 || ts < s.FirstAt {
		s.FirstAt = ts
	}
	if ts > s.LastAt {
		s.LastAt = ts
	}
}

func (t *transcript) message(rec *clawledger.Record, m *clawledger.Message) {
	s := t.s
	s.Messages++
	switch m.Role {
	case "user":
		s.UserMessages++
		if s.FirstUserText == "" {
			s.FirstUserText = openclaw.Clip(strings.TrimSpace(m.Text), 500)
		}
	case "assistant":
		s.AssistantMessages++
		rec.Model, rec.Provider = m.Model, m.Provider
		if rec.Model == "" {
			rec.Model, rec.Provider = s.Model, s.Provider
		}
		if m.API != "" {
			s.API = m.API
		}
		if u := m.Usage; u != nil {
			s.InputTokens += u.Input
			s.OutputTokens += u.Output
			s.CacheReadTokens += u.CacheRead
			s.CacheWriteTokens += u.CacheWrite
			s.Cost += u.Cost.Total
			if rec.Model != "" && !slices.Contains(s.Models, rec.Model) {
				s.Models = append(s.Models, rec.Model)
			}
		}
	case "toolResult":
		s.ToolResults++
		if rec.ToolFailed {
			s.ToolErrors++
		}
	}
	s.ToolCalls += int64(len(m.ToolCalls))
}

// usageKey identifies one assistant message across the copies of it that
// resets, deletions and forks leave behind, so its usage is counted once.
// Entry ids are short (8 hex digits) and can collide across sessions, so
// the message's own timestamp and token counts go into the key too; entries
// without an id are identified by their bytes.
func usageKey(rec *clawledger.Record, m *clawledger.Message) int64 {
	h := sha256.New()
	if rec.Entry.ID != "" {
		u := m.Usage
		h.Write([]byte(rec.Entry.ID))
		for _, n := range []int64{m.Timestamp, rec.Entry.Timestamp, u.Input, u.Output, u.CacheRead, u.CacheWrite} {
			h.Write([]byte{'|'})
			h.Write(strconv.AppendInt(nil, n, 10))
		}
	} else {
		h.Write(rec.Line.Raw)
	}
	// 64 bits: a key is looked up among the copies of one millisecond
	if k := int64(binary.BigEndian.Uint64(h.Sum(nil))); k != 0 {
		return k
	}
	return 1
}
