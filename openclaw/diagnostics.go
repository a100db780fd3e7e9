package openclaw

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/clawledger/clawledger"
)

// Scopes of OpenClaw's diagnostic_events that record configuration writes.
const (
	DiagnosticConfigAudit    = "config-audit"    // one row per config write (event config.write)
	DiagnosticConfigSnapshot = "config-snapshot" // the latest authored config, values fingerprinted (key "latest", rewritten)
)

// DiagnosticEvent masks a row of OpenClaw's diagnostic_events and maps
// its configuration writes. Beyond the masking every payload gets, the
// command line of a write is masked where it sets a secret (the argument
// after a path such as gateway.auth.token, a JSON value holding one), and
// the raw-file hashes OpenClaw records (previousHash, nextHash, rawHash)
// are replaced by their keyed form (Masker.HashKey), which matches the
// ledger's config versions but is no plain hash of a file holding secrets.
func (m Masker) DiagnosticEvent(scope, key string, sequence, createdAt int64, payload []byte) clawledger.DiagnosticEvent {
	e := clawledger.DiagnosticEvent{Scope: scope, Key: key, Sequence: sequence, CreatedAt: createdAt}
	v, err := DecodeConfig(payload)
	if err != nil {
		e.Payload = m.MaskJSON(payload, clawledger.MaxEventJSON)
	} else {
		if obj, ok := v.(map[string]any); ok {
			if argv, ok := obj["argv"].([]any); ok {
				obj["argv"] = m.argv(argv)
			}
			m.keyHashes(obj)
		}
		v = m.Tree(v)
		e.Payload = boundJSON(v, clawledger.MaxEventJSON)
		switch scope {
		case DiagnosticConfigAudit, DiagnosticConfigSnapshot:
			e.Config = configWrite(scope, createdAt, v)
		}
	}
	sum := sha256.Sum256(e.Payload)
	e.Digest = hex.EncodeToString(sum[:])
	return e
}

// argv masks a command line: an argument after one naming a secret path
// (config set gateway.auth.token VALUE, --token VALUE), and a JSON argument
// as a tree.
func (m Masker) argv(argv []any) []any {
	for i, a := range argv {
		s, ok := a.(string)
		if !ok {
			continue
		}
		if i > 0 {
			if prev, ok := argv[i-1].(string); ok && secretArg(prev) {
				argv[i] = m.Mark(secretKind(lastSegment(prev)), s)
				continue
			}
		}
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			if tree, err := DecodeConfig([]byte(t)); err == nil {
				argv[i] = string(CanonicalJSON(m.Tree(tree)))
				continue
			}
		}
		if name, value, ok := strings.Cut(s, "="); ok && strings.HasPrefix(name, "-") && secretArg(name) {
			argv[i] = name + "=" + m.Mark(secretKind(lastSegment(name)), value)
		}
	}
	return argv
}

// secretArg reports an argument naming a secret: a config path whose last
// segment is a secret key, or an option such as --token.
func secretArg(s string) bool {
	return SecretKey(lastSegment(s))
}

func lastSegment(s string) string {
	s = strings.TrimLeft(s, "-")
	if i := strings.LastIndexAny(s, ".["); i >= 0 {
		s = s[i+1:]
	}
	return strings.Trim(s, `]"'`)
}

// keyHashes replaces the raw-file hashes of a config audit payload by
// their keyed form.
func (m Masker) keyHashes(obj map[string]any) {
	for k, v := range obj {
		if s, ok := v.(string); ok && strings.HasSuffix(strings.ToLower(k), "hash") && isHexHash(s) {
			obj[k] = m.HashKey(s)
		}
	}
}

func isHexHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// configWrite maps a (masked, keyed) config-audit or config-snapshot
// payload.
func configWrite(scope string, createdAt int64, v any) *clawledger.ConfigWrite {
	w := &clawledger.ConfigWrite{
		Event:      cmp.Or(lookupString(v, "event"), "config.snapshot"),
		Time:       cmp.Or(timestampText(lookupString(v, "ts")), createdAt),
		ConfigPath: lookupString(v, "configPath"),
		Origin:     lookupString(v, "origin"),
		Result:     lookupString(v, "result"),
		PrevKey:    lookupString(v, "previousHash"),
		NextKey:    cmp.Or(lookupString(v, "nextHash"), lookupString(v, "rawHash")),
		PrevBytes:  lookupInt(v, "previousBytes"),
		NextBytes:  lookupInt(v, "nextBytes"),
	}
	if scope == DiagnosticConfigSnapshot {
		w.Event = "config.snapshot"
	}
	w.ChangedPaths = treeStrings(lookup(v, "changedPaths"))
	w.Argv = treeStrings(lookup(v, "argv"))
	w.Suspicious = treeStrings(lookup(v, "suspicious"))
	return w
}

// treeStrings reads an array's string elements (others as JSON).
func treeStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		} else {
			out = append(out, string(CanonicalJSON(e)))
		}
	}
	return out
}
