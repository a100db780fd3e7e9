package openclaw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/clawledger/clawledger"
)

// DiffConfig compares two versions of a configuration document (masked
// canonical JSON, or any JSON5) by path: keys added, removed and changed,
// an added or removed subtree reported once at its root. Arrays whose
// elements are all objects carrying a distinct "id" (agents.list, an
// approvals allowlist) or else "name" are matched by it
// (agents.list[id=ops].model); other arrays by index.
func DiffConfig(a, b []byte) ([]clawledger.ConfigDiff, error) {
	va, err := DecodeConfig(a)
	if err != nil {
		return nil, fmt.Errorf("old version: %w", err)
	}
	vb, err := DecodeConfig(b)
	if err != nil {
		return nil, fmt.Errorf("new version: %w", err)
	}
	var out []clawledger.ConfigDiff
	diffValue(&out, "", va, vb)
	return out, nil
}

// ChangedPaths lists the paths of a diff.
func ChangedPaths(diffs []clawledger.ConfigDiff) []string {
	out := make([]string, len(diffs))
	for i, d := range diffs {
		out[i] = d.Path
	}
	return out
}

func diffValue(out *[]clawledger.ConfigDiff, path string, a, b any) {
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			diffObject(out, path, x, y)
			return
		}
	case []any:
		if y, ok := b.([]any); ok {
			diffArray(out, path, x, y)
			return
		}
	}
	ja, jb := CanonicalJSON(a), CanonicalJSON(b)
	if !bytes.Equal(ja, jb) {
		*out = append(*out, clawledger.ConfigDiff{Path: path, Op: "changed", Old: ja, New: jb})
	}
}

func diffObject(out *[]clawledger.ConfigDiff, path string, a, b map[string]any) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := joinKey(path, k)
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inA:
			*out = append(*out, clawledger.ConfigDiff{Path: p, Op: "added", New: CanonicalJSON(vb)})
		case !inB:
			*out = append(*out, clawledger.ConfigDiff{Path: p, Op: "removed", Old: CanonicalJSON(va)})
		default:
			diffValue(out, p, va, vb)
		}
	}
}

func diffArray(out *[]clawledger.ConfigDiff, path string, a, b []any) {
	if key := idKey(a, b); key != "" {
		byID := map[string]any{}
		for _, e := range a {
			byID[idOf(e, key)] = e
		}
		seen := map[string]bool{}
		for _, e := range b {
			id := idOf(e, key)
			seen[id] = true
			p := path + "[" + key + "=" + quoteID(id) + "]"
			if old, ok := byID[id]; ok {
				diffValue(out, p, old, e)
			} else {
				*out = append(*out, clawledger.ConfigDiff{Path: p, Op: "added", New: CanonicalJSON(e)})
			}
		}
		for _, e := range a {
			if id := idOf(e, key); !seen[id] {
				*out = append(*out, clawledger.ConfigDiff{Path: path + "[" + key + "=" + quoteID(id) + "]", Op: "removed", Old: CanonicalJSON(e)})
			}
		}
		return
	}
	for i := 0; i < len(a) || i < len(b); i++ {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case i >= len(a):
			*out = append(*out, clawledger.ConfigDiff{Path: p, Op: "added", New: CanonicalJSON(b[i])})
		case i >= len(b):
			*out = append(*out, clawledger.ConfigDiff{Path: p, Op: "removed", Old: CanonicalJSON(a[i])})
		default:
			diffValue(out, p, a[i], b[i])
		}
	}
}

// idKey is the field the elements of two arrays are matched by: "id", else
// "name", when every element of both is an object with a distinct scalar
// value there; "" otherwise.
func idKey(a, b []any) string {
	if len(a)+len(b) == 0 {
		return ""
	}
	for _, key := range []string{"id", "name"} {
		if distinctIDs(a, key) && distinctIDs(b, key) {
			return key
		}
	}
	return ""
}

func distinctIDs(list []any, key string) bool {
	seen := map[string]bool{}
	for _, e := range list {
		obj, ok := e.(map[string]any)
		if !ok {
			return false
		}
		var id string
		switch v := obj[key].(type) {
		case string:
			id = v
		case json.Number:
			id = string(v)
		default:
			return false
		}
		if seen[id] {
			return false
		}
		seen[id] = true
	}
	return true
}

func idOf(e any, key string) string {
	switch v := e.(map[string]any)[key].(type) {
	case string:
		return v
	case json.Number:
		return string(v)
	}
	return ""
}

// plainKey reports a key that needs no quoting in a path: a letter, _ or
// $, then letters, digits, _, $ and -.
func plainKey(k string) bool {
	for i, c := range k {
		switch {
		case c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && (c == '-' || '0' <= c && c <= '9'):
		default:
			return false
		}
	}
	return k != ""
}

// joinKey appends an object key to a path: .key, or ["key"] when the key
// is not a plain name (a provider "my.host", a model "mock/mock-sonnet").
func joinKey(path, key string) string {
	if plainKey(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	q, _ := json.Marshal(key)
	return path + "[" + string(q) + "]"
}

func quoteID(id string) string {
	if plainKey(id) {
		return id
	}
	q, _ := json.Marshal(id)
	return string(q)
}
