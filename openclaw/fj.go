package openclaw

import (
	"strconv"
	"strings"
	"sync"

	"github.com/valyala/fastjson"
)

// Helpers that read fastjson values leniently: a field of an unexpected
// type reads as empty rather than failing the whole line.

func str(v *fastjson.Value, keys ...string) string {
	x := v.Get(keys...)
	if x == nil {
		return ""
	}
	switch x.Type() {
	case fastjson.TypeString:
		b, _ := x.StringBytes()
		return string(b)
	case fastjson.TypeNumber, fastjson.TypeTrue, fastjson.TypeFalse:
		return x.String()
	}
	return ""
}

// interned holds the values of low-cardinality fields (types, roles,
// models, providers, ...), so a million lines share a handful of strings
// instead of allocating one each.
var interned = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

const maxInterned = 4096

// sym reads a string field whose values repeat, interned.
func sym(v *fastjson.Value, keys ...string) string {
	x := v.Get(keys...)
	if x == nil || x.Type() != fastjson.TypeString {
		return str(v, keys...)
	}
	b, _ := x.StringBytes()
	interned.RLock()
	s, ok := interned.m[string(b)] // no allocation for the lookup
	interned.RUnlock()
	if ok {
		return s
	}
	s = string(b)
	interned.Lock()
	if len(interned.m) < maxInterned {
		interned.m[s] = s
	}
	interned.Unlock()
	return s
}

func num(v *fastjson.Value, keys ...string) (int64, bool) {
	x := v.Get(keys...)
	if x == nil {
		return 0, false
	}
	switch x.Type() {
	case fastjson.TypeNumber:
		// Float64 first: Int64 allocates an error for every non-integer
		f, err := x.Float64()
		if err != nil {
			return 0, false
		}
		if f > -(1<<53) && f < 1<<53 {
			return int64(f), true
		}
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		return int64(f), true
	case fastjson.TypeString:
		b, _ := x.StringBytes()
		s := strings.TrimSpace(string(b))
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return int64(f), true
		}
	}
	return 0, false
}

func integer(v *fastjson.Value, keys ...string) int64 {
	n, _ := num(v, keys...)
	return n
}

func float(v *fastjson.Value, keys ...string) float64 {
	x := v.Get(keys...)
	if x == nil {
		return 0
	}
	switch x.Type() {
	case fastjson.TypeNumber:
		f, _ := x.Float64()
		return f
	case fastjson.TypeString:
		b, _ := x.StringBytes()
		f, _ := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		return f
	}
	return 0
}

func boolean(v *fastjson.Value, keys ...string) bool {
	x := v.Get(keys...)
	return x != nil && x.Type() == fastjson.TypeTrue
}

// timestampOf reads an ISO string or an epoch number as epoch ms.
func timestampOf(v *fastjson.Value, keys ...string) int64 {
	x := v.Get(keys...)
	if x == nil {
		return 0
	}
	switch x.Type() {
	case fastjson.TypeString:
		b, _ := x.StringBytes()
		return timestampText(string(b))
	case fastjson.TypeNumber:
		f, _ := x.Float64()
		return epochMillis(f)
	}
	return 0
}

func stringList(v *fastjson.Value, keys ...string) []string {
	var out []string
	for _, x := range v.GetArray(keys...) {
		if x.Type() == fastjson.TypeString {
			b, _ := x.StringBytes()
			out = append(out, string(b))
		}
	}
	return out
}
