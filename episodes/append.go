package episodes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/redact"
)

// MaxIDLen bounds session and agent ids.
const MaxIDLen = 256

// Input is an event as a caller gives it, before validation.
type Input struct {
	EventID   string // "" = a new UUID
	TsMs      int64  // 0 = now
	Scope     string
	SessionID string
	AgentID   string
	Type      string
	Summary   string
	Payload   string // JSON text, optional
	Refs      string // JSON text, optional
}

// AppendOptions tune Append.
type AppendOptions struct {
	Truncate     bool // cut over-cap values (JSON stays valid, marked) instead of rejecting them
	AllowSecrets bool // accept text holding credentials, storing them masked
	Limits       Limits
	Now          time.Time
}

// AppendResult says what Append did.
type AppendResult struct {
	Event         *clawledger.Event
	Duplicate     bool     // the event id was stored before; nothing was written
	Truncated     []string // fields cut to their cap: summary, payload, refs
	SecretsMasked []string // kinds of credentials masked (with AllowSecrets)
	PIIMasked     int      // emails and phone numbers masked in the payload
}

// TimeLayout is how created_at is written: UTC, millisecond precision.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// ParseType validates an event type.
func ParseType(s string) (clawledger.EventType, error) {
	t := clawledger.EventType(strings.TrimSpace(s))
	if !t.Valid() {
		names := make([]string, len(clawledger.EventTypes))
		for i, x := range clawledger.EventTypes {
			names[i] = string(x)
		}
		return "", invalidf("unknown event type %q: use one of %s", s, strings.Join(names, ", "))
	}
	return t, nil
}

// ParseTypes validates a comma-separated list of event types.
func ParseTypes(csv string) ([]clawledger.EventType, error) {
	var out []clawledger.EventType
	for _, s := range strings.Split(csv, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		t, err := ParseType(s)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// ParseEventID validates an event id (a UUID) and returns its canonical form.
func ParseEventID(s string) (string, error) {
	id, err := uuid.Parse(strings.TrimSpace(s))
	if err != nil {
		return "", invalidf("event id %q is not a UUID", s)
	}
	return id.String(), nil
}

// checkID validates a session or agent id: non-empty, bounded, printable.
func checkID(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", invalidf("%s is required", field)
	case len(s) > MaxIDLen:
		return "", invalidf("%s is %d bytes long, over the %d-byte limit", field, len(s), MaxIDLen)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", invalidf("%s holds a control character", field)
	}
	return s, nil
}

// Prepare validates an input and builds the event to store: scope, type,
// ids and JSON are checked, credentials rejected (or masked with
// AllowSecrets), emails and phone numbers in the payload masked, and
// over-cap values rejected (or cut with Truncate). Every stored text is
// checked for credentials: the ids, the summary, every string of the
// payload and refs (keys included), and every value of a member named like
// a credential (password, secret, token, ...); text is matched normalized
// (NFKC, without zero-width and other invisible code points), so a
// credential hidden by one is found too. A scope holding one is refused.
func Prepare(in Input, opt AppendOptions) (*AppendResult, error) {
	if opt.Limits == (Limits{}) {
		opt.Limits = DefaultLimits
	}
	res := &AppendResult{}
	e := &clawledger.Event{TsMs: in.TsMs, SchemaVersion: clawledger.EpisodicSchemaVersion,
		CreatedAt: opt.Now.UTC().Format(TimeLayout)}
	res.Event = e
	var err error
	// a scope is never masked (a mask is no valid scope): one holding a
	// credential is refused, whatever the options
	if kinds := redact.SecretKinds(in.Scope); len(kinds) > 0 {
		return nil, invalidf("scope holds what looks like a credential (%s): remove it", strings.Join(kinds, ", "))
	}
	if e.Scope, err = NormalizeScope(in.Scope); err != nil {
		return nil, err
	}
	if e.Type, err = ParseType(in.Type); err != nil {
		return nil, err
	}
	if e.SessionID, err = checkID("session id", in.SessionID); err != nil {
		return nil, err
	}
	if e.SessionID, err = res.guardText("session id", e.SessionID, opt.AllowSecrets); err != nil {
		return nil, err
	}
	if e.AgentID, err = checkID("agent id", in.AgentID); err != nil {
		return nil, err
	}
	if e.AgentID, err = res.guardText("agent id", e.AgentID, opt.AllowSecrets); err != nil {
		return nil, err
	}
	switch {
	case in.TsMs < 0:
		return nil, invalidf("timestamp %d is negative", in.TsMs)
	case in.TsMs == 0:
		e.TsMs = opt.Now.UnixMilli()
	}
	if in.EventID == "" {
		e.EventID = newEventID()
	} else if e.EventID, err = ParseEventID(in.EventID); err != nil {
		return nil, err
	}

	summary := strings.TrimSpace(in.Summary)
	if summary == "" {
		return nil, invalidf("summary is required")
	}
	if summary, err = res.guardText("summary", summary, opt.AllowSecrets); err != nil {
		return nil, err
	}
	if len(summary) > opt.Limits.Summary {
		if !opt.Truncate {
			return nil, overCap("summary", len(summary), opt.Limits.Summary, "")
		}
		summary = clipBytes(summary, opt.Limits.Summary, ellipsis+"[truncated]")
		res.Truncated = append(res.Truncated, "summary")
	}
	e.Summary = summary

	if e.Payload, err = res.boundedJSON("payload", in.Payload, opt.Limits.PayloadCap(e.Type), e.Type, opt, true); err != nil {
		return nil, err
	}
	if e.Refs, err = res.boundedJSON("refs", in.Refs, opt.Limits.Refs, "", opt, false); err != nil {
		return nil, err
	}
	return res, nil
}

func overCap(field string, n, limit int, t clawledger.EventType) error {
	of := ""
	if t != "" {
		of = " for " + string(t) + " events"
	}
	return invalid(ErrOverCap, "%s is %d bytes, over the %d-byte cap%s", field, n, limit, of)
}

// guardText applies the secret guard to text.
func (r *AppendResult) guardText(field, s string, allow bool) (string, error) {
	kinds := redact.SecretKinds(s)
	if len(kinds) == 0 {
		return s, nil
	}
	if !allow {
		return "", secretError(field, kinds)
	}
	r.SecretsMasked = appendNew(r.SecretsMasked, kinds...)
	return redact.Secrets(s), nil
}

func secretError(field string, kinds []string) error {
	return invalid(ErrSecret, "%s holds what looks like a credential (%s)", field, strings.Join(kinds, ", "))
}

// boundedJSON validates a JSON field, applies the secret guard to its
// strings (and PII masking when pii is set) and enforces its cap.
func (r *AppendResult) boundedJSON(field, raw string, limit int, t clawledger.EventType, opt AppendOptions, pii bool) (json.RawMessage, error) {
	v, err := CompactJSON(field, raw)
	if v == nil || err != nil {
		return nil, err
	}
	var kinds []string
	if v, err = MapMembers(v, func(key, s string) string {
		// a member named like a credential (password, token, ...) holds
		// one, whatever it looks like
		if masked, ok := redact.SecretField(key, s); ok {
			kinds = appendNew(kinds, redact.KindSecretField)
			return masked
		}
		if k := redact.SecretKinds(s); len(k) > 0 {
			kinds = appendNew(kinds, k...)
			s = redact.Secrets(s)
		}
		if pii {
			if n := len(redact.FindPII(s)); n > 0 {
				r.PIIMasked += n
				s = redact.PII(s)
			}
		}
		return s
	}); err != nil {
		return nil, err
	}
	if len(kinds) > 0 {
		if !opt.AllowSecrets {
			return nil, secretError(field, kinds)
		}
		r.SecretsMasked = appendNew(r.SecretsMasked, kinds...)
	}
	if len(v) > limit {
		if !opt.Truncate {
			return nil, overCap(field, len(v), limit, t)
		}
		if v, err = TruncateJSON(v, limit); err != nil {
			return nil, err
		}
		r.Truncated = append(r.Truncated, field)
	}
	return v, nil
}

func appendNew(list []string, xs ...string) []string {
	for _, x := range xs {
		found := false
		for _, y := range list {
			found = found || x == y
		}
		if !found {
			list = append(list, x)
		}
	}
	return list
}

// newEventID returns a time-ordered UUID (v7), so new ids land at the end
// of the unique index.
func newEventID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// Append validates and stores one event. Appending an event id again is
// idempotent: an identical event (or one redacted since) is reported as a
// duplicate; a different event under a used id is refused, without saying
// where that id is used.
func Append(ctx context.Context, store clawledger.EventStore, in Input, opt AppendOptions) (*AppendResult, error) {
	res, err := Prepare(in, opt)
	if err != nil {
		return nil, err
	}
	e := res.Event
	inserted, err := store.AppendEvent(ctx, e)
	if err != nil || inserted {
		return res, err
	}
	old, err := store.Event(ctx, e.EventID)
	if errors.Is(err, clawledger.ErrNotFound) {
		return nil, errors.New("event " + e.EventID + " vanished while appending; try again")
	}
	if err != nil {
		return nil, err
	}
	if old.Scope != e.Scope || !(old.Redacted || sameEvent(old, e, in.TsMs != 0)) {
		return nil, invalidf("event id %s is already used by another event: events are append-only", e.EventID)
	}
	res.Event, res.Duplicate = old, true
	return res, nil
}

// sameEvent compares what a caller sent; the time only when it was given.
func sameEvent(a, b *clawledger.Event, withTime bool) bool {
	return a.SessionID == b.SessionID && a.AgentID == b.AgentID && a.Type == b.Type && a.Summary == b.Summary &&
		bytes.Equal(a.Payload, b.Payload) && bytes.Equal(a.Refs, b.Refs) && (!withTime || a.TsMs == b.TsMs)
}
